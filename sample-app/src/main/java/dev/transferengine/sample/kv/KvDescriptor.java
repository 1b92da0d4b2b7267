package dev.transferengine.sample.kv;

/**
 * What a decode node publishes so that prefill nodes can write into its page pool.
 *
 * @param address       the decode engine's main NetworkAddress, text form
 * @param region        the page pool's RegionDescriptor, text form
 * @param layers        transformer layers
 * @param pagesPerLayer pages per layer
 * @param pageSize      bytes per page
 */
public record KvDescriptor(String address, String region, int layers, int pagesPerLayer, long pageSize) {}
