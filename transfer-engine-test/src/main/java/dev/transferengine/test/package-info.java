/**
 * The conformance and fault kit for transfer-engine transports. A transport's tests extend {@link
 * dev.transferengine.test.TransportContract} (the delivery contract on loopback, in one process, with a manual clock for
 * every timeout; its {@code FaultsMidTransfer} group rotates keys, closes regions and closes engines while writes are
 * in flight) and {@link dev.transferengine.test.MultiProcessContract} (peers in child JVMs that are
 * killed or stopped). {@link dev.transferengine.test.HoldingTransport} wraps any transport so that a test can hold its
 * posts; {@link dev.transferengine.test.LoopbackNetwork} is an in-memory transport for tests of the engine's core;
 * {@link dev.transferengine.test.InstantTransport} completes every write at once (the engine alone, for benchmarks);
 * {@link dev.transferengine.test.Domains} opens one NIC of a transport outside an engine.
 */
@NullMarked
package dev.transferengine.test;

import org.jspecify.annotations.NullMarked;
