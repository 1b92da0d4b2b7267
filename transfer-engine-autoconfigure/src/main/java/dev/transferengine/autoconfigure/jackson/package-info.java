/**
 * JSON for the engine's descriptors: {@link dev.transferengine.MrDesc} and {@link dev.transferengine.NetAddr} in
 * their text forms.
 */
@NullMarked
package dev.transferengine.autoconfigure.jackson;

import org.jspecify.annotations.NullMarked;
