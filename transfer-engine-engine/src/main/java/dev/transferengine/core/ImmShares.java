package dev.transferengine.core;

import dev.transferengine.NetworkAddress;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.agrona.collections.IntArrayList;
import org.jspecify.annotations.Nullable;

/**
 * The places of the unexpected-imm bound ({@code EngineConfig.maxUnexpectedImms()}), shared fairly between the peers
 * that send imms nobody expects (issue 16 item 3). A place is held by a reservation, then by the credits it became,
 * until they are claimed, expire or the reservation is released. With {@code n} peers holding places, one more may
 * take one while it holds fewer than {@code bound / (n + 1)} (counting itself among the {@code n}) and the bound is not
 * reached: a peer that fills its share leaves room for the next one instead of starving it. Imms whose peer the
 * transport cannot tell share one quota as large as the bound, as before there were shares.
 *
 * <p>Taken only for imms nobody expects, so one monitor guards it; the {@link ImmCountTable} calls it with one of its
 * stripes locked, never the other way round.
 */
final class ImmShares {

    /** What {@link #take} answers when the peer may not take a place. */
    static final int REFUSED = -1;

    /** One peer's places. */
    private static final class Share {
        final @Nullable NetworkAddress peer;
        final int id;
        int held;

        Share(final @Nullable NetworkAddress peer, final int id) {
            this.peer = peer;
            this.id = id;
        }
    }

    private final int bound;
    private final Map<NetworkAddress, Share> byPeer = new HashMap<>();
    private final List<@Nullable Share> byId = new ArrayList<>();
    private final IntArrayList freeIds = new IntArrayList();
    /** The imms of peers the transport cannot tell apart. */
    private final Share unattributed;
    /** Places held, over all peers. */
    private int held;
    /** Peers holding at least one place. */
    private int holders;

    ImmShares(final int bound) {
        this.bound = bound;
        this.unattributed = register(null);
    }

    /**
     * Takes one place for {@code peer}.
     *
     * @return the share's id, for {@link #give}; or {@link #REFUSED} when the bound is reached or the peer holds its
     *     share
     */
    synchronized int take(final @Nullable NetworkAddress peer) {
        final Share known = peer == null ? unattributed : byPeer.get(peer);
        if (held >= bound || (known != null && known.held >= cap(known))) {
            return REFUSED;
        }
        final Share share = known != null ? known : register(peer);
        if (share.held++ == 0) {
            holders++;
        }
        held++;
        return share.id;
    }

    /** Gives back one place taken by {@link #take} for share {@code id}. */
    synchronized void give(final int id) {
        final Share share = byId.get(id);
        if (share == null || share.held == 0) {
            throw new IllegalStateException("share " + id + " holds no place");
        }
        held--;
        if (--share.held == 0) {
            holders--;
        }
    }

    /** Forgets the peers that hold no place, so that peers come and go without the map growing; the sweep's job. */
    synchronized void prune() {
        for (int id = 0; id < byId.size(); id++) {
            final Share share = byId.get(id);
            if (share != null && share.held == 0 && share.peer != null) {
                byPeer.remove(share.peer);
                byId.set(id, null);
                freeIds.addInt(id);
            }
        }
    }

    /** Places held, over all peers. */
    synchronized int held() {
        return held;
    }

    /** The most places {@code share} may hold now. */
    private int cap(final Share share) {
        if (share == unattributed) {
            return bound;
        }
        final int peers = holders + (share.held == 0 ? 1 : 0);
        return Math.max(1, bound / (peers + 1));
    }

    private Share register(final @Nullable NetworkAddress peer) {
        final int id = freeIds.isEmpty() ? byId.size() : freeIds.removeAt(freeIds.size() - 1);
        final Share share = new Share(peer, id);
        if (id == byId.size()) {
            byId.add(share);
        } else {
            byId.set(id, share);
        }
        if (peer != null) {
            byPeer.put(peer, share);
        }
        return share;
    }
}
