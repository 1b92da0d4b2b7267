/**
 * JSON for the engine's descriptors: {@link dev.transferengine.RegionDescriptor} and {@link dev.transferengine.NetworkAddress} in
 * their text forms.
 */
@NullMarked
package dev.transferengine.autoconfigure.jackson;

import org.jspecify.annotations.NullMarked;
