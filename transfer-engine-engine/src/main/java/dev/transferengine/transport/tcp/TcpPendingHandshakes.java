package dev.transferengine.transport.tcp;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;

import org.jspecify.annotations.Nullable;

/**
 * The handshakes a NIC is running on accepted sockets, oldest first, with a count per source address. They have
 * their own bounds ({@link TcpSettings#maxPendingHandshakes()} in all, {@link TcpSettings#maxHandshakesPerSource()}
 * per source), apart from the authenticated connections: a flood of sockets that never finish their handshake
 * fills only this, and one source cannot take every slot (issue 16, items 2 and 6). Worker thread only.
 */
final class TcpPendingHandshakes {

    private final ArrayList<TcpHandshake> handshakes = new ArrayList<>();
    private final HashMap<InetAddress, Integer> perSource = new HashMap<>();

    /** Why a new handshake from {@code source} may not start now, or null if it may. */
    @Nullable TcpCounter refusal(final @Nullable InetAddress source, final TcpSettings settings) {
        if (handshakes.size() >= settings.maxPendingHandshakes()) {
            return TcpCounter.HANDSHAKES_REFUSED;
        }
        if (source != null && perSource.getOrDefault(source, 0) >= settings.maxHandshakesPerSource()) {
            return TcpCounter.HANDSHAKES_REFUSED_PER_SOURCE;
        }
        return null;
    }

    void add(final TcpHandshake handshake) {
        handshakes.add(handshake);
        final InetAddress source = handshake.source();
        if (source != null) {
            perSource.merge(source, 1, Integer::sum);
        }
    }

    /** Forgets {@code handshake} (finished, failed or closed); a no-op if it is not here. */
    void remove(final TcpHandshake handshake) {
        if (!handshakes.remove(handshake)) {
            return;
        }
        final InetAddress source = handshake.source();
        if (source != null) {
            perSource.computeIfPresent(source, (address, count) -> count > 1 ? count - 1 : null);
        }
    }

    int size() {
        return handshakes.size();
    }

    TcpHandshake get(final int index) {
        return handshakes.get(index);
    }

    /** Closes every handshake (the domain closes). */
    void closeAll() {
        for (int i = handshakes.size() - 1; i >= 0; i--) {
            handshakes.get(i).close();
        }
        handshakes.clear();
        perSource.clear();
    }
}
