/**
 * Test support for applications that use the transfer-engine Spring Boot starter: a loopback engine pair, switched
 * on by {@code transfer-engine-test.loopback=true} or {@link dev.transferengine.boot.test.AutoConfigureTransferEngineLoopback}.
 */
@NullMarked
package dev.transferengine.boot.test;

import org.jspecify.annotations.NullMarked;
