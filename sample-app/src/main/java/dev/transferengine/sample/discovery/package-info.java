/**
 * Discovery in the sample: with {@code sample.discovery=redis} each node announces its engine in the Redis of
 * {@code spring.data.redis.*} under a lease, a decode node publishes its page pool there as {@code kv-pool}, and
 * {@code GET /discovery/engines} lists the engines this node's watch sees.
 */
@NullMarked
package dev.transferengine.sample.discovery;

import org.jspecify.annotations.NullMarked;
