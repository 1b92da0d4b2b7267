/**
 * A Reactor facade over {@link dev.transferengine.TransferEngine}: cold {@code Mono}s for writes, sends and imm
 * expectations, and {@code Flux}es for received messages (each subscription with its own pool of receive buffers) and
 * for imms nobody expects. Signals arrive on the engine's callback thread; add {@code publishOn} before blocking work.
 */
@NullMarked
package dev.transferengine.reactive;

import org.jspecify.annotations.NullMarked;
