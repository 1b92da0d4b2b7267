/**
 * Descriptor exchange between services: {@link dev.transferengine.autoconfigure.exchange.PublishedRegions} names the
 * regions a service lets peers write into, an opt-in WebFlux endpoint serves them, and
 * {@link dev.transferengine.autoconfigure.exchange.DescriptorFetcher} reads them from a peer.
 */
@NullMarked
package dev.transferengine.autoconfigure.exchange;

import org.jspecify.annotations.NullMarked;
