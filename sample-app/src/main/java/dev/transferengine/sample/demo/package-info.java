/** The demo that `java -jar sample-app.jar` runs: both roles in one JVM, and its live dashboard. */
@NullMarked
package dev.transferengine.sample.demo;

import org.jspecify.annotations.NullMarked;
