package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.agrona.collections.Int2IntHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;
import org.jspecify.annotations.Nullable;

/**
 * Negative acknowledgements on libfabric ({@link dev.transferengine.spi.Domain#abandonImm}): tagged messages with
 * {@link FabricOps#CONTROL_TAG}, sent from and received into buffers of the domain's own, never the user's receive
 * pools. Two kinds, little-endian:
 * <ul>
 *   <li>an abandonment: magic {@code "TENK"}, imm (int32), missing (int32), nonce (int64), the remote key (int64) of
 *       the receiver's region that the failed operation wrote, the sender's address length (uint16) and bytes, the
 *       cause's length (uint16) and UTF-8 bytes, at most {@value #MESSAGE_BYTES} bytes in all. The key is the proof:
 *       nothing on fabric authenticates a sender, and the named address is only what the message says, so the
 *       receiver reports an abandonment only where the key is one of its own regions' (registered, or among the last
 *       {@value #REMEMBERED_KEYS} deregistered): a sender without a descriptor of that NIC cannot end its imm waiters.
 *       The form before ({@code "TENA"}, no key) is refused;</li>
 *   <li>its receipt: magic {@code "TEAK"} and the abandonment's nonce, sent back to the address it names;</li>
 *   <li>a question for the receive pools' sizes ({@link FabricPoolSizes}): magic {@code "TEPQ"}, the asker's
 *       address length (uint16) and bytes, then the asker's nonce for that peer (int64; absent from engines before,
 *       read as 0);</li>
 *   <li>the sizes: magic {@code "TEPS"}, the sender's address length (uint16) and bytes, a count (uint16) and that
 *       many sizes (int32), per size class in use its smallest and largest, then the sizes' version (int64) and the
 *       nonce of the asker's question (int64); sent as the answer and again to every asker when a pool widens or a
 *       closed one narrows a class. The asker asks again until an answer comes, like an abandonment, and takes only
 *       answers that echo its nonce: a forged answer in a peer's name would otherwise narrow or widen what it sends
 *       there (and, with the highest version, for good).</li>
 * </ul>
 * A completed send does not mean the message arrived: a tcp;ofi_rxm target drops its connection when it refuses a
 * write, and whatever the sender queued behind that write (the acknowledgement of that very write, typically) is
 * lost with the connection although the sender's provider reported it sent. So an abandonment is posted again
 * until its receipt comes back, up to {@value #ATTEMPTS} times at growing intervals ({@link #retryDelayNanos}), and
 * the receiver reports each nonce once (it remembers the last {@value #REMEMBERED}): at most once to the user, and
 * through a connection that broke under it.
 *
 * <p>An abandonment that finds all {@value #SENDS} send buffers in flight waits in a backlog, oldest first, and is
 * encoded and sent as buffers free up ({@link #takeWaiting}): a prefill node that loses a peer with 64 KV-page streams
 * in flight tells every decode waiter, not the first 16. The backlog holds at most {@value #BACKLOG} distinct
 * (peer, imm) pairs, since an abandonment of a pair already waiting joins it: the missing counts add up (capped at
 * {@link Integer#MAX_VALUE}) and the first cause is kept, so the receiver gets one acknowledgement for that imm, as an
 * upper bound over every failed operation it stands for, and no second one is left to end a later wait of the same
 * imm. An abandonment beyond the cap is dropped, counted ({@link #droppedAbandonments}) and named by the domain's
 * log. The cap is far above a realistic burst (a peer lost with some hundreds of streams in flight, one imm each;
 * tens of peers lost at once) and small enough to preallocate (some 100 KiB). Single-threaded (the domain's worker).
 */
final class FabricControl {

    /** Largest control message, in bytes; a longer one is refused. */
    static final int MESSAGE_BYTES = 1024;
    /** The largest control receive buffer: {@link #FabricControl(Arena, long)}. */
    static final int MAX_RECEIVE_BYTES = 64 * 1024;
    /** Receive buffers posted at once. */
    static final int RECEIVES = 8;
    /** Abandonments in flight (sent and not yet receipted) at once; one more waits in the backlog. */
    static final int SENDS = 16;
    /** Distinct (peer, imm) pairs waiting for a send buffer at most; one more is dropped (and logged by the domain). */
    static final int BACKLOG = 4096;
    /** Receipts in flight at once; one more is not sent (the abandonment's sender posts it again). */
    static final int RECEIPTS = 16;
    /** Posts of one abandonment, the first included, before the sender gives up on its receipt. */
    static final int ATTEMPTS = 10;
    /**
     * Nonces of abandonments a receiver remembers, to report each once: more than a sender's whole backlog, so that
     * a repeat posted for a lost receipt is still known while that sender's later abandonments arrive.
     */
    static final int REMEMBERED = BACKLOG + SENDS;
    /** Keys of regions deregistered here that an abandonment may still name (its write failed on the way). */
    static final int REMEMBERED_KEYS = 64;

    private static final int MAGIC = 0x4B4E4554; // "TENK", little-endian
    private static final int UNKEYED_MAGIC = 0x414E4554; // "TENA": the form before keyed abandonments
    private static final int RECEIPT_MAGIC = 0x4B414554; // "TEAK", little-endian
    private static final int QUERY_MAGIC = 0x51504554; // "TEPQ", little-endian
    private static final int SIZES_MAGIC = 0x53504554; // "TEPS", little-endian
    private static final int HEADER = 4 + 4 + 4 + 8 + 8;
    private static final int RECEIPT_BYTES = 4 + 8;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;

    /** A send buffer's state: free, posted (its completion not seen), or sent and waiting for its receipt. */
    private static final byte FREE = 0;

    private static final byte POSTED = 1;
    private static final byte WAITING = 2;

    private final MemorySegment receiveBuffers;
    private final MemorySegment sendBuffers;
    private final MemorySegment receiptBuffers;
    private final byte[] state = new byte[SENDS];
    private final long[] nonce = new long[SENDS];
    private final long[] peer = new long[SENDS];
    private final int[] length = new int[SENDS];
    private final int[] attempts = new int[SENDS];
    private final long[] dueAt = new long[SENDS];
    /** Receipted while its post had not completed yet: freed at the completion. */
    private final boolean[] receipted = new boolean[SENDS];

    /** The backlog: a ring of {@link #backlogCapacity} entries from {@link #waitingHead}, oldest first. */
    private final int backlogCapacity;

    private final long[] waitingPeer;
    private final long[] waitingKey;
    private final int[] waitingImm;
    private final int[] waitingMissing;
    private final @Nullable String[] waitingCause;
    /** Per peer, each waiting imm's place in the ring: where a later abandonment of that pair joins it. */
    private final Long2ObjectHashMap<Int2IntHashMap> waitingPlaces = new Long2ObjectHashMap<>();

    private int waitingHead;
    private int waitingCount;
    private long droppedAbandonments;

    private final boolean[] receiptSending = new boolean[RECEIPTS];
    private final RecentLongs seen = new RecentLongs(REMEMBERED);
    private final RecentLongs deregisteredKeys = new RecentLongs(REMEMBERED_KEYS);
    private long nextNonce = ThreadLocalRandom.current().nextLong();

    private final int receiveBytes;

    /**
     * Control buffers for a domain whose provider sends messages up to {@code injectBytes} inline ({@code
     * inject_size}). Receive buffers take at least that much (at most {@value #MAX_RECEIVE_BYTES}), though no control
     * message is longer than {@value #MESSAGE_BYTES}: libfabric 2.1's shm cannot truncate an unexpected inline message
     * into a shorter buffer ({@code smr_copy_saved} asserts, or dereferences null without asserts), so a longer
     * message that anyone sent to the control tag would end the receiving process.
     */
    FabricControl(final Arena arena, final long injectBytes) {
        this(arena, injectBytes, BACKLOG);
    }

    /** A control whose backlog holds {@code backlogCapacity} pairs (tests reach the cap with a small one). */
    FabricControl(final Arena arena, final long injectBytes, final int backlogCapacity) {
        this.backlogCapacity = backlogCapacity;
        this.waitingPeer = new long[backlogCapacity];
        this.waitingKey = new long[backlogCapacity];
        this.waitingImm = new int[backlogCapacity];
        this.waitingMissing = new int[backlogCapacity];
        this.waitingCause = new String[backlogCapacity];
        this.receiveBytes = Math.clamp(injectBytes, MESSAGE_BYTES, MAX_RECEIVE_BYTES);
        this.receiveBuffers = arena.allocate((long) RECEIVES * receiveBytes, 64);
        this.sendBuffers = arena.allocate((long) SENDS * MESSAGE_BYTES, 64);
        this.receiptBuffers = arena.allocate((long) RECEIPTS * RECEIPT_BYTES, 64);
    }

    MemorySegment receiveBuffer(final int index) {
        return receiveBuffers.asSlice((long) index * receiveBytes, receiveBytes);
    }

    /** A free send buffer's index, now taken, or -1 when {@value #SENDS} abandonments are in flight. */
    int takeSend() {
        for (int i = 0; i < SENDS; i++) {
            if (state[i] == FREE) {
                state[i] = POSTED;
                attempts[i] = 0;
                receipted[i] = false;
                return i;
            }
        }
        return -1;
    }

    /** Whether any abandonment is in flight or waits in the backlog. */
    boolean sending() {
        if (waitingCount > 0) {
            return true;
        }
        for (int i = 0; i < SENDS; i++) {
            if (state[i] != FREE) {
                return true;
            }
        }
        return false;
    }

    /** The peer (fi_addr_t) that send {@code index} goes to. */
    long peer(final int index) {
        return peer[index];
    }

    /** The bytes of send {@code index}'s message, ready to post; counts the post as an attempt. */
    MemorySegment post(final int index) {
        state[index] = POSTED;
        attempts[index]++;
        return sendBuffers.asSlice((long) index * MESSAGE_BYTES, length[index]);
    }

    /**
     * Send {@code index}'s post completed (or failed) at {@code now}: frees it when its receipt came meanwhile or it
     * has had its attempts, else waits for the receipt until {@link #retryDelayNanos}. Answers whether it was freed.
     */
    boolean posted(final int index, final long now) {
        if (receipted[index] || attempts[index] >= ATTEMPTS) {
            state[index] = FREE;
            return true;
        }
        state[index] = WAITING;
        dueAt[index] = now + retryDelayNanos(attempts[index]);
        return false;
    }

    /**
     * How long the sender waits for a receipt after attempt {@code attempt} before posting again: 2, 4, 8, ... 512
     * ms, some 1 s in all. The first waits cover a connection that broke under the message: RxM notices the break
     * and takes the peer's new connection within its connection-event interval (1 ms, set by {@link FabricLibrary}),
     * so the second or third post usually goes on the new connection; the later ones cover a loaded machine. A
     * receipt costs one round trip, so a post that was only slow is answered twice, and reported once.
     */
    static long retryDelayNanos(final int attempt) {
        return TimeUnit.MILLISECONDS.toNanos(1L << attempt);
    }

    /** The first send whose receipt is overdue at {@code now}, or -1. */
    int overdue(final long now) {
        for (int i = 0; i < SENDS; i++) {
            if (state[i] == WAITING && now - dueAt[i] >= 0) {
                return i;
            }
        }
        return -1;
    }

    /** Frees every send and empties the backlog (the domain stops); answers how many waited there. */
    int clearSends() {
        Arrays.fill(state, FREE);
        Arrays.fill(receiptSending, false);
        final int waited = waitingCount;
        Arrays.fill(waitingCause, null);
        waitingPlaces.clear();
        waitingHead = 0;
        waitingCount = 0;
        return waited;
    }

    /** Whether abandonments wait in the backlog for a send buffer. */
    boolean backlogged() {
        return waitingCount > 0;
    }

    /** Distinct (peer, imm) pairs in the backlog. */
    int backlog() {
        return waitingCount;
    }

    /** Abandonments dropped because the backlog was full, since the domain opened. */
    long droppedAbandonments() {
        return droppedAbandonments;
    }

    /**
     * Puts an abandonment behind those waiting for a send buffer, or adds its missing count to the waiting one of
     * the same (peer, imm), whose key and cause stay. False when it is a new pair and the backlog is full: it is dropped,
     * and counted. Allocates only to track a peer with nothing waiting yet.
     */
    boolean queue(final long to, final long key, final int imm, final int missing, final String cause) {
        Int2IntHashMap places = waitingPlaces.get(to);
        final int place = places == null ? -1 : places.get(imm);
        if (place >= 0) {
            waitingMissing[place] = (int) Math.min(Integer.MAX_VALUE, (long) waitingMissing[place] + missing);
            return true;
        }
        if (waitingCount == backlogCapacity) {
            droppedAbandonments++;
            return false;
        }
        if (places == null) {
            places = new Int2IntHashMap(-1);
            waitingPlaces.put(to, places);
        }
        final int at = (waitingHead + waitingCount) % backlogCapacity;
        waitingCount++;
        waitingPeer[at] = to;
        waitingKey[at] = key;
        waitingImm[at] = imm;
        waitingMissing[at] = missing;
        waitingCause[at] = cause;
        places.put(imm, at);
        return true;
    }

    /**
     * Takes a free send buffer for the oldest waiting abandonment and encodes it there (a fresh nonce, as {@link
     * #encode}); answers the buffer's index, or -1 when nothing waits or every buffer is in flight.
     */
    int takeWaiting(final NetworkAddress self) {
        if (waitingCount == 0) {
            return -1;
        }
        final int index = takeSend();
        if (index < 0) {
            return -1;
        }
        final int at = waitingHead;
        final long to = waitingPeer[at];
        final Int2IntHashMap places = Objects.requireNonNull(waitingPlaces.get(to));
        places.remove(waitingImm[at]);
        if (places.isEmpty()) {
            waitingPlaces.remove(to);
        }
        encode(
                index,
                to,
                self,
                waitingKey[at],
                waitingImm[at],
                waitingMissing[at],
                Objects.requireNonNull(waitingCause[at]));
        waitingCause[at] = null;
        waitingHead = (waitingHead + 1) % backlogCapacity;
        waitingCount--;
        return index;
    }

    /** Frees send {@code index} at once (its post could not be made). */
    void releaseSend(final int index) {
        state[index] = FREE;
    }

    /** A receipt buffer's index, now taken, holding the receipt for {@code receiptNonce}; -1 when all are in use. */
    int takeReceipt(final long receiptNonce) {
        for (int i = 0; i < RECEIPTS; i++) {
            if (!receiptSending[i]) {
                receiptSending[i] = true;
                final MemorySegment buffer = receipt(i);
                buffer.set(INT, 0, RECEIPT_MAGIC);
                buffer.set(LONG, 4, receiptNonce);
                return i;
            }
        }
        return -1;
    }

    MemorySegment receipt(final int index) {
        return receiptBuffers.asSlice((long) index * RECEIPT_BYTES, RECEIPT_BYTES);
    }

    void releaseReceipt(final int index) {
        receiptSending[index] = false;
    }

    /**
     * Encodes an abandonment to {@code to} into send buffer {@code index}, with a fresh nonce and the remote key of the
     * receiver's region that the failed operation wrote.
     */
    void encode(
            final int index,
            final long to,
            final NetworkAddress self,
            final long key,
            final int imm,
            final int missing,
            final String cause) {
        final MemorySegment buffer = sendBuffers.asSlice((long) index * MESSAGE_BYTES, MESSAGE_BYTES);
        final byte[] address = self.toBytes();
        final byte[] text = cause.getBytes(StandardCharsets.UTF_8);
        final int textLength = Math.min(text.length, MESSAGE_BYTES - HEADER - 4 - address.length);
        nonce[index] = nextNonce++;
        peer[index] = to;
        buffer.set(INT, 0, MAGIC);
        buffer.set(INT, 4, imm);
        buffer.set(INT, 8, missing);
        buffer.set(LONG, 12, nonce[index]);
        buffer.set(LONG, 20, key);
        buffer.set(SHORT, HEADER, (short) address.length);
        MemorySegment.copy(address, 0, buffer, ValueLayout.JAVA_BYTE, HEADER + 2, address.length);
        final long at = HEADER + 2L + address.length;
        buffer.set(SHORT, at, (short) textLength);
        MemorySegment.copy(text, 0, buffer, ValueLayout.JAVA_BYTE, at + 2, textLength);
        length[index] = (int) (at + 2 + textLength);
    }

    /** What a control message turned out to be. */
    sealed interface Received {}

    /** A receipt for the abandonment with {@code nonce}. */
    record Receipt(long nonce) implements Received {}

    /**
     * An abandonment that names {@code peer} as its sender and {@code key} as the receiver's region its operation
     * wrote; the domain checks the key, then reports it unless its nonce was reported before ({@link #firstTime}).
     */
    record Abandonment(NetworkAddress peer, long key, int imm, int missing, String cause, long nonce)
            implements Received {}

    /** A message dropped for {@code reason}: {@code why} says what it was. */
    record Refused(FabricControlRefusals.Reason reason, String why) implements Received {}

    /** A peer asks for the sizes of this domain's receive pools ({@link FabricPoolSizes}), with its nonce. */
    record PoolQuery(NetworkAddress peer, long nonce) implements Received {}

    /**
     * A peer's receive pools' sizes ({@link FabricPoolSizes#advertised}), their version (-1 from an engine that sends
     * none) and the nonce of the question they answer ({@code nonced} false where the message carries none), read
     * once by the domain and dropped.
     */
    @SuppressWarnings("ArrayRecordComponent") // never compared or kept: equality by content is never asked for
    record PoolSizes(NetworkAddress peer, int[] sizes, long version, long nonce, boolean nonced) implements Received {}

    /**
     * A question for the peer's pool sizes, from {@code self} with its {@code nonce} for that peer: its own buffer,
     * kept until its send completes.
     */
    static MemorySegment poolQuery(final NetworkAddress self, final long nonce) {
        final byte[] address = self.toBytes();
        final MemorySegment buffer = Arena.ofAuto().allocate(4 + 2 + address.length + 8, 8);
        buffer.set(INT, 0, QUERY_MAGIC);
        buffer.set(SHORT, 4, (short) address.length);
        MemorySegment.copy(address, 0, buffer, ValueLayout.JAVA_BYTE, 6, address.length);
        buffer.set(LONG, 6 + address.length, nonce);
        return buffer;
    }

    /**
     * {@code self}'s pool sizes (at most {@value FabricPoolSizes#CLASSES} pairs), answering the question that carried
     * {@code nonce}: its own buffer, as above.
     */
    static MemorySegment poolSizes(final NetworkAddress self, final int[] sizes, final long version, final long nonce) {
        final byte[] address = self.toBytes();
        final MemorySegment buffer = Arena.ofAuto().allocate(4 + 2 + address.length + 2 + 4L * sizes.length + 8 + 8, 8);
        buffer.set(INT, 0, SIZES_MAGIC);
        buffer.set(SHORT, 4, (short) address.length);
        MemorySegment.copy(address, 0, buffer, ValueLayout.JAVA_BYTE, 6, address.length);
        final long at = 6L + address.length;
        buffer.set(SHORT, at, (short) sizes.length);
        MemorySegment.copy(sizes, 0, buffer, INT, at + 2, sizes.length);
        buffer.set(LONG, at + 2 + 4L * sizes.length, version);
        buffer.set(LONG, at + 2 + 4L * sizes.length + 8, nonce);
        return buffer;
    }

    /** Decodes a question for pool sizes or an answer to it; null when {@code buffer} is neither. */
    private static @Nullable Received decodePools(final MemorySegment buffer) {
        final int magic = buffer.get(INT, 0);
        if (magic != QUERY_MAGIC && magic != SIZES_MAGIC) {
            return null;
        }
        final int addressLength = buffer.byteSize() < 6 ? -1 : Short.toUnsignedInt(buffer.get(SHORT, 4));
        if (addressLength < 0 || 6L + addressLength > buffer.byteSize()) {
            return malformed("a pool-size message of " + buffer.byteSize() + " bytes without a whole address");
        }
        final NetworkAddress from;
        try {
            from = NetworkAddress.fromBytes(buffer.asSlice(6, addressLength).toArray(ValueLayout.JAVA_BYTE));
        } catch (final RuntimeException e) {
            return malformed("a pool-size message with a bad sender address: " + e.getMessage());
        }
        final long nonceAt = 6L + addressLength;
        if (magic == QUERY_MAGIC) {
            return new PoolQuery(from, nonceAt + 8 > buffer.byteSize() ? 0 : buffer.get(LONG, nonceAt));
        }
        final long at = 6L + addressLength;
        final int count = at + 2 > buffer.byteSize() ? -1 : Short.toUnsignedInt(buffer.get(SHORT, at));
        if (count < 0 || count > 2 * FabricPoolSizes.CLASSES || at + 2 + 4L * count > buffer.byteSize()) {
            return malformed("a pool-size message from " + from + " with a bad count " + count);
        }
        final int[] sizes = new int[count];
        MemorySegment.copy(buffer, INT, at + 2, sizes, 0, count);
        final long versionAt = at + 2 + 4L * count;
        final boolean nonced = versionAt + 16 <= buffer.byteSize();
        return new PoolSizes(
                from,
                sizes,
                versionAt + 8 > buffer.byteSize() ? -1 : buffer.get(LONG, versionAt),
                nonced ? buffer.get(LONG, versionAt + 8) : 0,
                nonced);
    }

    private static Refused malformed(final String why) {
        return new Refused(FabricControlRefusals.Reason.MALFORMED, why);
    }

    /** Decodes the {@code length} bytes in receive buffer {@code index}. */
    Received decode(final int index, final int length) {
        if (length > MESSAGE_BYTES) {
            return malformed("a control message of " + length + " bytes, longer than any of ours");
        }
        final MemorySegment buffer = receiveBuffer(index).asSlice(0, Math.max(length, 0));
        if (buffer.byteSize() >= RECEIPT_BYTES && buffer.get(INT, 0) == RECEIPT_MAGIC) {
            return new Receipt(buffer.get(LONG, 4));
        }
        final Received pools = buffer.byteSize() >= 4 ? decodePools(buffer) : null;
        if (pools != null) {
            return pools;
        }
        if (buffer.byteSize() >= 4 && buffer.get(INT, 0) == UNKEYED_MAGIC) {
            return new Refused(
                    FabricControlRefusals.Reason.UNPROVEN,
                    "a negative acknowledgement of " + length + " bytes without a region key (an engine before keyed"
                            + " acknowledgements, or a forgery)");
        }
        if (buffer.byteSize() < HEADER + 4 || buffer.get(INT, 0) != MAGIC) {
            return malformed("a control message of " + length + " bytes without our magic");
        }
        final int imm = buffer.get(INT, 4);
        final int missing = buffer.get(INT, 8);
        final long messageNonce = buffer.get(LONG, 12);
        final long key = buffer.get(LONG, 20);
        final int addressLength = Short.toUnsignedInt(buffer.get(SHORT, HEADER));
        final long textAt = HEADER + 2L + addressLength;
        if (missing < 1 || textAt + 2 > buffer.byteSize()) {
            return malformed(
                    "a control message with count " + missing + " and an address of " + addressLength + " bytes");
        }
        final int textLength = Short.toUnsignedInt(buffer.get(SHORT, textAt));
        if (textAt + 2 + textLength > buffer.byteSize()) {
            return malformed("a control message whose cause of " + textLength + " bytes overruns it");
        }
        final NetworkAddress from;
        try {
            from = NetworkAddress.fromBytes(
                    buffer.asSlice(HEADER + 2, addressLength).toArray(ValueLayout.JAVA_BYTE));
        } catch (final RuntimeException e) {
            return malformed("a control message with a bad sender address: " + e.getMessage());
        }
        final String cause = new String(
                buffer.asSlice(textAt + 2, textLength).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
        return new Abandonment(from, key, imm, missing, cause, messageNonce);
    }

    /** Records an abandonment's {@code messageNonce}: whether it is the first time (report it) or a repeat. */
    boolean firstTime(final long messageNonce) {
        return seen.add(messageNonce);
    }

    /** Region {@code key} was deregistered here: an abandonment naming it is still taken for a while. */
    void deregistered(final long key) {
        deregisteredKeys.add(key);
    }

    /** Whether {@code key} is among the last {@value #REMEMBERED_KEYS} deregistered here. */
    boolean recentlyDeregistered(final long key) {
        return deregisteredKeys.contains(key);
    }

    /** The last {@code capacity} distinct values added, the oldest forgotten first. */
    private static final class RecentLongs {
        private final long[] ring;
        private final LongHashSet values = new LongHashSet();
        private int next;

        RecentLongs(final int capacity) {
            this.ring = new long[capacity];
        }

        /** Adds {@code value}; false when it was there already. */
        boolean add(final long value) {
            if (!values.add(value)) {
                return false;
            }
            if (values.size() > ring.length) {
                values.remove(ring[next]);
            }
            ring[next] = value;
            next = (next + 1) % ring.length;
            return true;
        }

        boolean contains(final long value) {
            return values.contains(value);
        }
    }

    /** The receipt for {@code receiptNonce} came: the send it answers is done. Answers its index, or -1. */
    int receipted(final long receiptNonce) {
        for (int i = 0; i < SENDS; i++) {
            if (state[i] != FREE && nonce[i] == receiptNonce) {
                if (state[i] == WAITING) {
                    state[i] = FREE;
                } else {
                    receipted[i] = true;
                }
                return i;
            }
        }
        return -1;
    }
}
