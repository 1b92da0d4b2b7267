/**
 * The transport SPI: a {@link dev.transferengine.spi.Transport} found with {@link java.util.ServiceLoader} opens
 * {@link dev.transferengine.spi.Domain}s, one per NIC. A domain is single-threaded: only its group's worker calls
 * it, and it reports completions through its {@link dev.transferengine.spi.DomainListener} from inside
 * {@link dev.transferengine.spi.Domain#poll()}.
 */
@NullMarked
package dev.transferengine.spi;

import org.jspecify.annotations.NullMarked;
