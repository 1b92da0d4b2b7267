/**
 * The live dashboard at {@code /}: every engine of the application, sampled and streamed as Server-Sent Events.
 */
@NullMarked
package dev.transferengine.sample.dashboard;

import org.jspecify.annotations.NullMarked;
