/** KV-cache transfer: prefill writes each layer's pages into decode's pool as it computes them. */
@NullMarked
package dev.transferengine.sample.kv;

import org.jspecify.annotations.NullMarked;
