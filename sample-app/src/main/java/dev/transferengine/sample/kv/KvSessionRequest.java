package dev.transferengine.sample.kv;

/**
 * Prefill's request to decode: get ready for {@code pages} pages in every layer.
 *
 * @param pages pages per layer
 */
public record KvSessionRequest(int pages) {}
