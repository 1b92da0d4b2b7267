package dev.transferengine.sample;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.springframework.stereotype.Component;

/**
 * The nodes this one may call, from {@code sample.peers}: requests name a peer, never give a URL, so no caller can
 * make this node write its memory to, or present its token to, a server of the caller's choosing.
 */
@Component
public final class NamedPeers {

    private final Map<String, String> urls;

    NamedPeers(final SampleProperties properties) {
        this.urls = new TreeMap<>(properties.peers());
    }

    /**
     * The base URL of the peer called {@code name}.
     *
     * @param name a peer's name
     * @return its base URL
     * @throws IllegalArgumentException if no peer has that name
     */
    public String url(final String name) {
        final String url = urls.get(name);
        if (url == null) {
            throw new IllegalArgumentException(
                    "no peer named '" + name + "' in sample.peers; configured: " + urls.keySet());
        }
        return url;
    }

    /**
     * The base URLs of the peers called {@code names}.
     *
     * @param names peers' names
     * @return their base URLs, in the same order
     * @throws IllegalArgumentException if one of them is not configured
     */
    public List<String> urls(final List<String> names) {
        return names.stream().map(this::url).toList();
    }
}
