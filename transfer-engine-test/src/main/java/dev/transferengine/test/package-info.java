/**
 * The conformance and fault kit for transfer-engine transports (docs/delivery-contract.md says how a third-party
 * transport runs it). A transport's tests extend {@link dev.transferengine.test.TransportContract} (the delivery
 * contract on loopback, in one process, with a manual clock for every timeout; its {@code FaultsMidTransfer} group
 * rotates keys, closes regions and closes engines while writes are in flight, {@code FailuresAndFencing} proves the
 * rekey fence against a late write, {@code Cancellation} cancels before and after posting) and
 * {@link dev.transferengine.test.MultiProcessContract} (peers in child JVMs that are killed, stopped, or cut off by
 * a {@link dev.transferengine.test.NetworkPartition}). Every fault case checks that each operation ended exactly once,
 * done or with a typed error, by its deadline plus 100 ms on a manual clock. A transport declares what it cannot do
 * by overriding the suites' named hooks, and each skipped case says why.
 *
 * <p>The injectors are public: {@link dev.transferengine.test.HoldingTransport} wraps any transport so that a test
 * can hold its posts, and keep withdrawn ones as late writes ({@link dev.transferengine.test.HoldingDomain});
 * {@link dev.transferengine.test.PeerProcesses} runs a peer engine in a child JVM that can be killed or stopped;
 * {@link dev.transferengine.test.NetworkPartition} drops every packet between the test and a peer.
 * {@link dev.transferengine.test.LoopbackNetwork} is an in-memory transport for tests of the engine's core;
 * {@link dev.transferengine.test.InstantTransport} completes every write at once (the engine alone, for benchmarks);
 * {@link dev.transferengine.test.Domains} opens one NIC of a transport outside an engine.
 */
@NullMarked
package dev.transferengine.test;

import org.jspecify.annotations.NullMarked;
