/** The sample app: a prefill and a decode node moving a KV cache, and a trainer pushing weights, over one engine each. */
@NullMarked
package dev.transferengine.sample;

import org.jspecify.annotations.NullMarked;
