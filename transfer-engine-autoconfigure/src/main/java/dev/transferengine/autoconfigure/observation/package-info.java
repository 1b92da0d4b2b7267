/**
 * Micrometer Observations of the reactive facade's writes, sends and imm waits, children of the observation in the
 * Reactor context (a WebFlux request's), so a trace shows each transfer inside the request that caused it.
 */
@NullMarked
package dev.transferengine.autoconfigure.observation;

import org.jspecify.annotations.NullMarked;
