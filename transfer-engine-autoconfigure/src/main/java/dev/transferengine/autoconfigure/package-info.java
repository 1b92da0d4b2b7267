/**
 * Spring Boot auto-configuration of a {@link dev.transferengine.TransferEngine} and its
 * {@link dev.transferengine.reactive.ReactiveTransferEngine} from {@code transfer-engine.*} properties.
 */
@NullMarked
package dev.transferengine.autoconfigure;

import org.jspecify.annotations.NullMarked;
