/**
 * Health of the transfer engine: its workers, NICs and unreachable peers.
 */
@NullMarked
package dev.transferengine.autoconfigure.health;

import org.jspecify.annotations.NullMarked;
