package dev.transferengine.reactive;

import dev.transferengine.BarrierWrite;
import dev.transferengine.GroupRouting;
import dev.transferengine.ImmWrite;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PagedRead;
import dev.transferengine.PagedWrite;
import dev.transferengine.ReadRequest;
import dev.transferengine.Routing;
import dev.transferengine.ScatterRead;
import dev.transferengine.ScatterWrite;
import dev.transferengine.SingleRead;
import dev.transferengine.SingleWrite;
import dev.transferengine.WriteRequest;

import org.jspecify.annotations.Nullable;

/**
 * One operation of a {@link ReactiveTransferEngine}, as a {@link TransferObserver} sees it: a few bounded names
 * (fit for metric tags) and the peer (unbounded).
 *
 * @param transport the engine's transport, e.g. {@code tcp}
 * @param kind      {@code write}, {@code paged-write}, {@code imm-write}, {@code scatter}, {@code barrier},
 *                  {@code read}, {@code paged-read}, {@code scatter-read}, {@code send} or {@code imm-wait}
 * @param routing   how the operation is spread over the NICs: {@code sharded-<n>}, {@code pinned-<nic>},
 *                  {@code per-nic-ranges} (paged writes), {@code shard-peers}, {@code shard-bytes},
 *                  {@code single-nic-<nic>} (scatter), or {@code none} (sends go out on NIC 0 of group 0, imm waits
 *                  route nothing)
 * @param peer      where it goes: the first destination NIC, the peer of a send, the first source NIC of a read;
 *                  null for an operation on many peers (scatter, barrier, scatter read) and for an imm wait
 */
public record TransferDescription(
        String transport,
        String kind,
        String routing,
        @Nullable NetworkAddress peer) {

    /**
     * Describes {@code request}. Allocates.
     *
     * @param transport the engine's transport, e.g. {@code tcp}
     * @param request the write to describe
     * @return its kind, routing and first destination NIC (none for scatter and barrier)
     */
    public static TransferDescription of(final String transport, final WriteRequest request) {
        return switch (request) {
            case final SingleWrite write ->
                new TransferDescription(
                        transport,
                        "write",
                        routing(write.routing()),
                        write.dst().nic(0).address());
            case final PagedWrite write ->
                new TransferDescription(
                        transport,
                        "paged-write",
                        "per-nic-ranges",
                        write.dst().nic(0).address());
            case final ImmWrite write ->
                new TransferDescription(
                        transport,
                        "imm-write",
                        routing(write.routing()),
                        write.dst().nic(0).address());
            case final ScatterWrite write ->
                new TransferDescription(transport, "scatter", routing(write.routing()), null);
            case final BarrierWrite write ->
                new TransferDescription(transport, "barrier", routing(write.routing()), null);
        };
    }

    /**
     * Describes the read {@code request}. Allocates.
     *
     * @param transport the engine's transport, e.g. {@code tcp}
     * @param request the read to describe
     * @return its kind, routing and first source NIC (none for a scatter read)
     */
    public static TransferDescription of(final String transport, final ReadRequest request) {
        return switch (request) {
            case final SingleRead read ->
                new TransferDescription(
                        transport,
                        "read",
                        routing(read.routing()),
                        read.src().nic(0).address());
            case final PagedRead read ->
                new TransferDescription(
                        transport,
                        "paged-read",
                        "per-nic-ranges",
                        read.src().nic(0).address());
            case final ScatterRead read ->
                new TransferDescription(transport, "scatter-read", routing(read.routing()), null);
        };
    }

    /**
     * A send to {@code peer}. Allocates.
     *
     * @param transport the engine's transport
     * @param peer the receiving NIC's address
     * @return kind {@code send}, routing {@code none}
     */
    public static TransferDescription send(final String transport, final NetworkAddress peer) {
        return new TransferDescription(transport, "send", "none", peer);
    }

    /**
     * A wait for imm events. Allocates.
     *
     * @param transport the engine's transport
     * @return kind {@code imm-wait}, routing {@code none}, no peer
     */
    public static TransferDescription immWait(final String transport) {
        return new TransferDescription(transport, "imm-wait", "none", null);
    }

    private static String routing(final Routing routing) {
        return switch (routing) {
            case final Routing.Sharded sharded -> "sharded-" + sharded.shards();
            case final Routing.Pinned pinned -> "pinned-" + pinned.nic();
        };
    }

    private static String routing(final GroupRouting routing) {
        return switch (routing) {
            case final GroupRouting.ShardPeers ignored -> "shard-peers";
            case final GroupRouting.ShardBytes ignored -> "shard-bytes";
            case final GroupRouting.SingleNic single -> "single-nic-" + single.nic();
        };
    }
}
