package dev.transferengine.sample.kv;

import org.jspecify.annotations.Nullable;

/**
 * Prefill's request to decode: get ready for {@code pages} pages in every layer.
 *
 * @param pages  pages per layer
 * @param source for a pull session, prefill's cache descriptor (text form) decode reads the pages from; null (or
 *               absent in the JSON) for a push session, where prefill writes them
 */
public record KvSessionRequest(int pages, @Nullable String source) {

    /**
     * A push session: prefill writes the pages.
     *
     * @param pages pages per layer
     */
    public KvSessionRequest(final int pages) {
        this(pages, null);
    }
}
