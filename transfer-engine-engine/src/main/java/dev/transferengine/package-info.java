/**
 * The public API of transfer-engine: a {@link dev.transferengine.TransferEngine} moves bytes between registered
 * memory regions with reliable-but-unordered one-sided writes carrying 32-bit immediates, and counts those
 * immediates on the receiver instead of relying on order.
 */
@NullMarked
package dev.transferengine;

import org.jspecify.annotations.NullMarked;
