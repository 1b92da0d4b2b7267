/**
 * The engine's internals: a worker per DomainGroup that owns its NICs and never blocks, sharding and completion
 * aggregation, the imm-count table and the callback thread. Reached only through the public API.
 */
@NullMarked
package dev.transferengine.core;

import org.jspecify.annotations.NullMarked;
