package dev.transferengine.sample.kv;

import dev.transferengine.sample.SampleProperties;

/**
 * Where the pages of a KV cache lie: layer {@code l}'s page {@code p} is global page {@code l * pagesPerLayer + p},
 * at byte {@code pageSize} times that.
 *
 * @param layers        transformer layers
 * @param pagesPerLayer pages per layer
 * @param pageSize      bytes per page
 * @param tokensPerPage tokens one page holds
 */
public record KvLayout(int layers, int pagesPerLayer, long pageSize, int tokensPerPage) {

    /**
     * The layout configured under {@code sample.kv}.
     *
     * @param kv the settings
     * @return the layout
     */
    public static KvLayout of(final SampleProperties.Kv kv) {
        return new KvLayout(kv.layers(), kv.pagesPerLayer(), kv.pageSize().toBytes(), kv.tokensPerPage());
    }

    /** Bytes of the whole cache. */
    public long bytes() {
        return (long) layers * pagesPerLayer * pageSize;
    }

    /**
     * Pages needed for {@code tokens} tokens in each layer.
     *
     * @param tokens number of tokens, at least 1
     * @return pages per layer
     * @throws IllegalArgumentException if the tokens do not fit in one layer's pages
     */
    public int pagesFor(final int tokens) {
        if (tokens < 1) {
            throw new IllegalArgumentException("tokens must be >= 1, was " + tokens);
        }
        final int pages = (tokens + tokensPerPage - 1) / tokensPerPage;
        if (pages > pagesPerLayer) {
            throw new IllegalArgumentException(tokens + " tokens need " + pages + " pages per layer, but a layer has "
                    + pagesPerLayer + " pages of " + tokensPerPage + " tokens");
        }
        return pages;
    }

    /**
     * The global index of a page.
     *
     * @param layer the layer
     * @param page  the page within the layer
     * @return the page's index in the whole cache
     */
    public int globalPage(final int layer, final int page) {
        return layer * pagesPerLayer + page;
    }

    /**
     * Whether the other side's cache has the same shape, so pages can be written one to one.
     *
     * @param other the peer's layout
     * @return true if layers, pages per layer and page size agree
     */
    public boolean compatibleWith(final KvLayout other) {
        return layers == other.layers && pagesPerLayer == other.pagesPerLayer && pageSize == other.pageSize;
    }
}
