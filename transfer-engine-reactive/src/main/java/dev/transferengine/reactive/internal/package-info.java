/** Not API: the engine thread factory this module registers with {@link java.util.ServiceLoader}. */
@NullMarked
package dev.transferengine.reactive.internal;

import org.jspecify.annotations.NullMarked;
