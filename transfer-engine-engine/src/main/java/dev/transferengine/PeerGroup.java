package dev.transferengine;

import java.util.List;

/**
 * A set of peers resolved once (see {@link TransferEngine#addPeerGroup(List)}), for scatter and barrier; or
 * {@link #NONE} for requests that resolve their peers per call.
 */
public interface PeerGroup {

    /** No peer group: peers are resolved per call. */
    PeerGroup NONE = NoGroup.INSTANCE;

    /**
     * How many peers the group holds.
     *
     * @return the number of peers; 0 for {@link #NONE}
     */
    int size();

    /**
     * The peers, in the order they were given.
     *
     * @return per peer, its NIC addresses in NIC order; immutable
     */
    List<List<NetworkAddress>> peers();

    /** The sentinel behind {@link #NONE}. */
    enum NoGroup implements PeerGroup {
        /** The one empty group. */
        INSTANCE;

        @Override
        public int size() {
            return 0;
        }

        @Override
        public List<List<NetworkAddress>> peers() {
            return List.of();
        }
    }
}
