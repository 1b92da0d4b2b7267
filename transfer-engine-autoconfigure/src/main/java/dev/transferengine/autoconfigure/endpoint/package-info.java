/**
 * The {@code transferengine} actuator endpoint: addresses, groups, NICs, peers, regions and counters.
 */
@NullMarked
package dev.transferengine.autoconfigure.endpoint;

import org.jspecify.annotations.NullMarked;
