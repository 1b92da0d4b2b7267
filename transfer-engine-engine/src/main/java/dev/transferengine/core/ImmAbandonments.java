package dev.transferengine.core;

import dev.transferengine.BarrierWrite;
import dev.transferengine.EngineCounter;
import dev.transferengine.GroupRouting;
import dev.transferengine.ImmWrite;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PagedWrite;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.Routing;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.SingleWrite;
import dev.transferengine.WriteRequest;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.Domain;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Negative acknowledgements: when a request carrying an imm fails, tells each receiver how many of its imm events
 * will not come (over NIC 0), so the receiver's expectation ends now instead of at its own timeout. A failure path,
 * so it may allocate. Worker thread only.
 */
final class ImmAbandonments {

    private final int group;
    /** The group's NICs; the group reopens them in place. */
    private final Domain[] domains;

    private final Counters counters;
    private final ThrottledLog errors;

    ImmAbandonments(final int group, final Domain[] domains, final Counters counters, final ThrottledLog errors) {
        this.group = group;
        this.domains = domains;
        this.counters = counters;
        this.errors = errors;
    }

    /** Request {@code s} failed with {@code error}; {@code s.confirmed} of its imm events were seen to land. */
    void tell(final Submission s, final TransferEngineException error) {
        if (!(s.request instanceof WriteRequest request)) {
            return; // a send or a read carries no imm
        }
        final String cause = String.valueOf(error.getMessage());
        switch (request) {
            case SingleWrite w ->
                w.imm()
                        .ifPresent(imm -> one(
                                w.dst(),
                                imm,
                                (w.routing() instanceof Routing.Sharded sharded ? sharded.shards() : 1) - s.confirmed,
                                cause));
            case PagedWrite w -> w.imm().ifPresent(imm -> one(w.dst(), imm, w.pageCount() - s.confirmed, cause));
            case ImmWrite w -> one(w.dst(), w.value(), 1 - s.confirmed, cause);
            case BarrierWrite w -> each(w.dsts(), w.value(), 1, cause);
            case ScatterWrite w -> {
                if (w.imm().isPresent()) {
                    final List<RegionDescriptor> dsts =
                            new ArrayList<>(w.targets().size());
                    for (final ScatterTarget target : w.targets()) {
                        dsts.add(target.dst());
                    }
                    final int perTarget = w.routing() instanceof GroupRouting.ShardBytes ? domains.length : 1;
                    each(dsts, w.imm().getAsInt(), perTarget, cause);
                }
            }
        }
    }

    /** One acknowledgement per receiving peer, counting every event of the request to it (some may have landed). */
    private void each(final List<RegionDescriptor> dsts, final int imm, final int perDestination, final String cause) {
        final Map<NetworkAddress, RegionDescriptor> byPeer = new LinkedHashMap<>();
        final Map<NetworkAddress, Integer> events = new HashMap<>();
        for (final RegionDescriptor dst : dsts) {
            final NetworkAddress peer = dst.nic(0).address();
            byPeer.putIfAbsent(peer, dst);
            events.merge(peer, perDestination, Integer::sum);
        }
        byPeer.forEach((peer, dst) -> one(dst, imm, events.getOrDefault(peer, perDestination), cause));
    }

    private void one(final RegionDescriptor dst, final int imm, final int missing, final String cause) {
        if (missing <= 0) {
            return;
        }
        final Domain domain = domains[0];
        try {
            domain.abandonImm(domain.resolve(dst.nic(0).address()), dst.nic(0).rkey(), imm, missing, cause);
            counters.increment(EngineCounter.IMMS_ABANDONED_SENT);
        } catch (final RuntimeException e) { // the request's own failure is reported either way
            errors.warn(
                    "group " + group + ": telling " + dst.nic(0).address() + " that imm " + imm
                            + " was abandoned failed",
                    e);
        }
    }
}
