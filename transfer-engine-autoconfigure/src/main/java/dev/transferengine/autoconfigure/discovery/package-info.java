/**
 * Discovery: a {@link dev.transferengine.autoconfigure.discovery.DescriptorRegistry} where each engine publishes its
 * address and named regions under a lease and finds its peers' ({@code lookup}, {@code watch}), with an HTTP
 * implementation over the descriptor exchange and a Redis one (Spring Data Redis, reactive), chosen with
 * {@code transfer-engine.discovery.type}.
 */
@NullMarked
package dev.transferengine.autoconfigure.discovery;

import org.jspecify.annotations.NullMarked;
