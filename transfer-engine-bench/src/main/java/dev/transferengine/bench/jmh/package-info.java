/** The JMH suites: the submit path, the domains through the SPI, and the GPU paths through the API. */
@NullMarked
package dev.transferengine.bench.jmh;

import org.jspecify.annotations.NullMarked;
