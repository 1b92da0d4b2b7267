/**
 * Micrometer meters over the transfer engine's counters, named {@code transfer.engine.*}.
 */
@NullMarked
package dev.transferengine.autoconfigure.metrics;

import org.jspecify.annotations.NullMarked;
