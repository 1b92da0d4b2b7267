package dev.transferengine.transport.fabric;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static dev.transferengine.transport.fabric.FabricLayout.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Takes the messages an shm endpoint holds unexpected (sent to it while no receive of theirs was posted) before the
 * endpoint closes, so that fi_close finds none.
 *
 * <p>libfabric 2.1's shm frees such a message twice when the endpoint closes: {@code smr_ep_close} frees its
 * command context and receive entry, then {@code util_srx_close} hands the freed entries, still queued, to {@code
 * smr_discard}. That tests the stale command's {@code src_data} where it means {@code op_src}, and for an inject
 * message (the offset of its buffer in this endpoint's region), or an inline one whose command slot held an offset
 * before, writes 8 zero bytes at that offset into the sender's region: SIGSEGV when the sender was an endpoint of
 * this process that closed (its region unmapped; FabricShmCloseTest, and CI after FabricControlOutsiderTest), else
 * the sender's shared memory silently changed. A message that is received, not discarded, never reaches that path.
 *
 * <p>So each receive posted here matches any sender and any tag, into a scratch buffer of the inject size (an inline
 * or inject message fits whole: 2.1 cannot truncate those) whose contents are dropped. Whether a receive took a held
 * message shows on the completion queue at once: the provider matches held messages when the receive is posted.
 * One that completes nothing is left posted: a receive posted at fi_close is freed without a discard. Larger
 * messages (CMA, SAR) are taken too; one whose SAR transfer still needs its sender ends the taking, and what is held
 * behind it meets the close as before.
 */
final class FabricUnexpectedMessages {

    /** At most this many messages are taken, so that a peer that keeps sending cannot hold the close. */
    static final int MAX_TAKEN = 1 << 16;

    private static final int ENTRIES = 16;

    private final FabricEndpoint endpoint;
    private final MemorySegment iov;
    private final MemorySegment tagged;
    private final MemorySegment untagged;
    private final MemorySegment entries;
    private final MemorySegment error;

    /** Allocates in {@code arena}, which must outlive the endpoint's fi_close (a receive may stay posted). */
    FabricUnexpectedMessages(final FabricEndpoint endpoint, final Arena arena, final long bufferBytes) {
        this.endpoint = endpoint;
        final MemorySegment buffer = arena.allocate(bufferBytes, 64);
        iov = arena.allocate(IOVEC);
        iov.set(ADDRESS, IOV_BASE, buffer);
        iov.set(JAVA_LONG, IOV_LEN, bufferBytes);
        tagged = arena.allocate(FI_MSG_TAGGED);
        tagged.set(ADDRESS, TMSG_MSG_IOV, iov);
        tagged.set(JAVA_LONG, TMSG_IOV_COUNT, 1);
        tagged.set(JAVA_LONG, TMSG_ADDR, FabricDomain.FI_ADDR_UNSPEC);
        tagged.set(JAVA_LONG, TMSG_TAG, 0);
        tagged.set(JAVA_LONG, TMSG_IGNORE, -1L); // every tag
        tagged.set(ADDRESS, TMSG_CONTEXT, tagged);
        untagged = arena.allocate(FI_MSG);
        untagged.set(ADDRESS, MSG_MSG_IOV, iov);
        untagged.set(JAVA_LONG, MSG_IOV_COUNT, 1);
        untagged.set(JAVA_LONG, MSG_ADDR, FabricDomain.FI_ADDR_UNSPEC);
        untagged.set(ADDRESS, MSG_CONTEXT, untagged);
        entries = arena.allocate(CQE_SIZE * ENTRIES, 8);
        error = arena.allocate(ERR_ENTRY_BYTES, 8);
    }

    /**
     * Takes the held tagged messages, then the untagged ones. Completions of other operations read meanwhile are
     * dropped: call only when the endpoint is closing, when its owner fails what it still held.
     *
     * @return how many messages were taken
     */
    int takeAll() {
        return take(true) + take(false);
    }

    private int take(final boolean taggedMessages) {
        final MemorySegment msg = taggedMessages ? tagged : untagged;
        int taken = 0;
        while (taken < MAX_TAKEN) {
            final long rc = endpoint.postReceiveForAny(msg, taggedMessages, FabricDomain.FI_COMPLETION);
            if (rc == -FabricFailures.FI_EAGAIN) {
                if (!completed(msg)) {
                    return taken; // nothing to make room with
                }
                taken++;
                continue;
            }
            if (rc < 0 || !completed(msg)) {
                return taken; // refused, or posted and waiting: nothing held any more
            }
            taken++;
        }
        return taken;
    }

    /** Reads the completion queue empty; whether it held a completion (or error) of {@code msg}'s receive. */
    private boolean completed(final MemorySegment msg) {
        boolean found = false;
        while (true) {
            final long n = endpoint.cqRead(entries, ENTRIES);
            if (n == -FabricFailures.FI_EAVAIL) {
                if (endpoint.cqReadErr(error) < 0) {
                    return found;
                }
                found |= error.get(JAVA_LONG, ERR_OP_CONTEXT) == msg.address();
            } else if (n > 0) {
                for (int i = 0; i < n; i++) {
                    found |= entries.get(JAVA_LONG, i * CQE_SIZE + CQE_OP_CONTEXT) == msg.address();
                }
            } else {
                return found;
            }
        }
    }
}
