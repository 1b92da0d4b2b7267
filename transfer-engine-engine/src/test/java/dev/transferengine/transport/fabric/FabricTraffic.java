package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongHashSet;

/**
 * Two-sided sends and imm writes from one domain to each of its peers for a while, with receive buffers posted
 * again as messages take them, every operation given up on at its deadline ({@link Domain#cancel}, as the engine's
 * timeout does), and how each ended counted, so that a fault test can check that each ended exactly once (see
 * {@link FabricPeerProcess}, {@code TRAFFIC}). Runs on the domain's polling thread: {@link #step} between polls, the
 * listener methods from them.
 */
final class FabricTraffic {

    /** The first token of an operation; those of receive buffers start at {@link #RECEIVE_TOKENS}. */
    static final long TOKENS = 1L << 50;
    /** The first token of a receive buffer. */
    static final long RECEIVE_TOKENS = 1L << 51;
    /** Set in every imm this traffic writes, so that the peer can tell them from a test's own. */
    static final int IMM_MARK = 1 << 30;

    /** Peer address, base and key, as {@code READY} printed them. */
    record Target(NetworkAddress address, long base, long rkey) {

        /** Parses {@code <address>,<base>,<rkey>}. */
        static Target parse(final String text) {
            final String[] parts = text.split(",", -1);
            return new Target(NetworkAddress.parse(parts[0]), Long.parseLong(parts[1]), Long.parseLong(parts[2]));
        }
    }

    private static final long WRITE_BYTES = 4096;
    private static final long SEND_BYTES = 512;
    private static final int BUFFERS = 16;
    private static final int BUFFER_BYTES = 4096;
    /** Operations outstanding to one peer at most. */
    private static final int PER_PEER = 4;
    /** Receive buffers come back within this after they are withdrawn, or count as missing. */
    private static final long WITHDRAW_NANOS = 20_000_000_000L;

    private final Domain domain;
    private final MemorySegment region;
    private final long rkey;
    private final List<Target> targets;
    private final long[] handles;
    private final int[] outstandingTo;
    private final long until;
    private final long timeoutNanos;
    private final Arena arena = Arena.ofShared();

    /** Posted and not yet ended, by token: the peer's index. */
    private final Long2LongHashMap peerOf = new Long2LongHashMap(-1);
    /** Posted and not yet ended, by token: its deadline. */
    private final Long2LongHashMap deadlines = new Long2LongHashMap(-1);
    /** Tokens given up on (cancelled) whose report may still come once. */
    private final LongHashSet cancelled = new LongHashSet();
    /** Tokens that ended by a report. */
    private final LongHashSet reported = new LongHashSet();
    /** Receive buffers posted and not back, by token: the buffer index. */
    private final Long2LongHashMap buffers = new Long2LongHashMap(-1);

    private final LongHashSet buffersBack = new LongHashSet();
    private final MemorySegment[] receiveBuffers = new MemorySegment[BUFFERS];
    private final Map<String, Integer> errors = new TreeMap<>();

    private long nextToken = TOKENS;
    private long nextReceiveToken = RECEIVE_TOKENS;
    private int next;
    private long withdrawnAt;
    private int posted;
    private int completedCount;
    private int failedCount;
    private int cancelledCount;
    private int late;
    private int duplicates;
    private int unknown;
    private int messages;
    private int withdrawnCount;
    private int bufferDuplicates;

    FabricTraffic(
            final Domain domain,
            final MemorySegment region,
            final long rkey,
            final List<Target> targets,
            final long millis,
            final long timeoutMillis) {
        this.domain = domain;
        this.region = region;
        this.rkey = rkey;
        this.targets = List.copyOf(targets);
        this.handles = new long[targets.size()];
        this.outstandingTo = new int[targets.size()];
        this.until = System.nanoTime() + millis * 1_000_000L;
        this.timeoutNanos = timeoutMillis * 1_000_000L;
    }

    /** Resolves the peers and posts the receive buffers. */
    void start() {
        for (int i = 0; i < targets.size(); i++) {
            handles[i] = domain.resolve(targets.get(i).address());
        }
        for (int i = 0; i < BUFFERS; i++) {
            receiveBuffers[i] = arena.allocate(BUFFER_BYTES, 64);
            postReceive(i);
        }
    }

    private void postReceive(final int index) {
        final long token = nextReceiveToken++;
        buffers.put(token, index);
        domain.postReceive(token, receiveBuffers[index]);
    }

    /**
     * Posts what the peers have room for while the time lasts, gives up on overdue operations, and at the end
     * withdraws the receive buffers.
     *
     * @return whether it is done: every operation ended and every receive buffer came back (or was waited for long
     *     enough to count as missing)
     */
    boolean step() {
        final long now = System.nanoTime();
        giveUpOverdue(now);
        if (now - until < 0) {
            for (int n = 0; n < targets.size(); n++) {
                final int peer = next;
                next = (next + 1) % targets.size();
                if (outstandingTo[peer] < PER_PEER) {
                    post(peer, now);
                }
            }
            return false;
        }
        if (!peerOf.isEmpty()) {
            return false;
        }
        if (withdrawnAt == 0) {
            withdrawnAt = now;
            final long[] tokens =
                    buffers.keySet().stream().mapToLong(Long::longValue).toArray();
            for (final long token : tokens) {
                domain.withdrawReceive(token);
            }
        }
        return buffers.isEmpty() || now - withdrawnAt > WITHDRAW_NANOS;
    }

    private void post(final int peer, final long now) {
        final long token = nextToken++;
        peerOf.put(token, peer);
        deadlines.put(token, now + timeoutNanos);
        outstandingTo[peer]++;
        posted++;
        if (token % 2 == 0) {
            final Target target = targets.get(peer);
            domain.write(new WriteDescriptor()
                    .token(token)
                    .source(region, 0, rkey, WRITE_BYTES)
                    .target(handles[peer], target.base(), 0, target.rkey())
                    .imm(true, IMM_MARK | (int) (token & 0xFFFF)));
        } else {
            domain.send(token, handles[peer], region.asSlice(0, SEND_BYTES));
        }
    }

    private void giveUpOverdue(final long now) {
        final List<Long> overdue = new ArrayList<>();
        deadlines.forEach((token, deadline) -> {
            if (now - deadline > 0) {
                overdue.add(token);
            }
        });
        for (final long token : overdue) {
            if (ended(token)) {
                continue; // cancelled by the report of an earlier one
            }
            domain.cancel(token); // may report it (and others) failed at once: behind a gone peer
            if (!ended(token)) {
                cancelled.add(token);
                cancelledCount++;
                end(token);
            }
        }
    }

    private void end(final long token) {
        final int peer = (int) peerOf.remove(token);
        deadlines.remove(token);
        outstandingTo[peer]--;
    }

    /** Whether {@code token} is one of this traffic's operations or receive buffers. */
    static boolean owns(final long token) {
        return token >= TOKENS;
    }

    void onComplete(final long token, final long bytes) {
        if (report(token)) {
            completedCount++;
        }
    }

    void onFailed(final long token, final TransferEngineException error) {
        if (errors.merge(error.getClass().getSimpleName(), 1, Integer::sum) == 1) {
            System.err.println("traffic: first " + error.getClass().getSimpleName() + ": " + error.getMessage());
        }
        if (report(token)) {
            failedCount++;
        }
    }

    /** Counts a report of {@code token}; true if it ended the operation. */
    private boolean report(final long token) {
        if (!reported.add(token)) {
            duplicates++;
            return false;
        }
        if (cancelled.remove(token)) {
            late++; // the domain may still report a piece that had left before the cancel, once
            return false;
        }
        if (!peerOf.containsKey(token)) {
            unknown++;
            return false;
        }
        end(token);
        return true;
    }

    void onReceive(final long token, final int length) {
        messages++;
        final int index = bufferBack(token);
        if (index >= 0 && withdrawnAt == 0) {
            postReceive(index);
        }
    }

    void onReceiveWithdrawn(final long token) {
        withdrawnCount++;
        bufferBack(token);
    }

    private int bufferBack(final long token) {
        if (!buffersBack.add(token)) {
            bufferDuplicates++;
            return -1;
        }
        return (int) buffers.remove(token);
    }

    /** Whether {@code token} ended: reported, or given up on. */
    private boolean ended(final long token) {
        return !peerOf.containsKey(token);
    }

    /** {@code key=value} pairs of what happened, on one line. */
    String result() {
        return "posted=" + posted + " completed=" + completedCount + " failed=" + failedCount + " cancelled="
                + cancelledCount + " late=" + late + " duplicates=" + duplicates + " unknown=" + unknown
                + " messages=" + messages + " withdrawn=" + withdrawnCount + " buffersMissing=" + buffers.size()
                + " bufferDuplicates=" + bufferDuplicates + " nicFailed=" + (domain.failure() != null) + " errors="
                + (errors.isEmpty() ? "none" : errors.toString().replace(" ", ""));
    }

    /** Frees the receive buffers; the domain must not hold any of them any more. */
    void close() {
        arena.close();
    }
}
