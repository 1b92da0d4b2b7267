package dev.transferengine.core;

import dev.transferengine.spi.Domain;

import java.util.ArrayList;

/**
 * The engine-allocated memory of regions a group deregistered, waiting until nothing touches it before it is
 * freed: every operation the group had in flight at deregistration ended (one may still read the memory as its
 * source), and no NIC still has a copy or a reply queued into or out of it ({@link Domain#touches}). Worker
 * thread only.
 */
final class AllocationDrains {

    /** An allocation and the tokens of the operations in flight when its region was deregistered. */
    private static final class Draining {
        final EngineAllocation allocation;
        final long[] inFlight;

        Draining(final EngineAllocation allocation, final long[] inFlight) {
            this.allocation = allocation;
            this.inFlight = inFlight;
        }
    }

    private final ArrayList<Draining> pending = new ArrayList<>();

    /** The allocation's region was just deregistered on every NIC of the group. */
    void add(final EngineAllocation allocation, final InFlightTable inFlight) {
        pending.add(new Draining(allocation, inFlight.liveTokens()));
    }

    boolean isEmpty() {
        return pending.isEmpty();
    }

    /** Completes the drains nothing touches any more; returns how many. */
    int serve(final Domain[] domains, final InFlightTable inFlight) {
        int done = 0;
        for (int i = pending.size() - 1; i >= 0; i--) {
            final Draining draining = pending.get(i);
            if (quiet(draining, domains, inFlight)) {
                pending.remove(i);
                draining.allocation.drained().complete(null);
                done++;
            }
        }
        return done;
    }

    /** The group is closing: its NICs closed (which waits for their copies), so nothing touches any of them. */
    void completeAll() {
        for (final Draining draining : pending) {
            draining.allocation.drained().complete(null);
        }
        pending.clear();
    }

    private static boolean quiet(final Draining draining, final Domain[] domains, final InFlightTable inFlight) {
        for (final long token : draining.inFlight) {
            if (inFlight.get(token) != null) {
                return false;
            }
        }
        for (final Domain domain : domains) {
            if (domain != null && domain.touches(draining.allocation.segment())) {
                return false;
            }
        }
        return true;
    }
}
