/**
 * te-bench, the engine's command-line benchmark: one-shot runs beside their C anchors ({@code write}, {@code serve}),
 * the docs generator ({@code report}) and the JMH launcher ({@code jmh}).
 */
@NullMarked
package dev.transferengine.bench;

import org.jspecify.annotations.NullMarked;
