package dev.transferengine.transport.tcp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Flyweight over one frame header of the tcp transport's wire protocol, version {@value #VERSION}. Every frame is
 * a fixed 48-byte little-endian header, followed by {@code length} payload bytes for the types that carry a
 * payload (HELLO, CHALLENGE, AUTH, ERROR, WRITE, WRITE_IMM, WRITEV, WRITEV_IMM, PAGES, PAGES_IMM, SEND, ABANDON,
 * READ_DATA; a READ's length is the length it asks for, and it carries no payload; a READ_FAILED carries none):
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                 magic 0x474E4554 ("TENG")                     |  0
 *  +---------------+---------------+-------------------------------+
 *  |    version    |     type      |        flags (must be 0)      |  4
 *  +---------------+---------------+-------------------------------+
 *  |          imm (int32); ERROR: the version the sender speaks    |  8
 *  +---------------------------------------------------------------+
 *  |  aux (int32): NACK refusal code (TcpRefusal), ERROR code,     | 12
 *  |  ACK, WRITEV(_IMM), PAGES(_IMM): a count of requests (>= 1),  |
 *  |  READ_FAILED: its reason code (TcpReadFailure)                |
 *  +---------------------------------------------------------------+
 *  |  token (int64): request id; HELLO, CHALLENGE: incarnation id  | 16
 *  +---------------------------------------------------------------+
 *  |              rkey (int64): remote key of the region           | 24
 *  +---------------------------------------------------------------+
 *  |            offset (int64): byte offset within the region      | 32
 *  +---------------------------------------------------------------+
 *  |  length (int64): payload bytes; ACK: bytes accepted;          | 40
 *  |  NACK: region size or largest receive buffer (-1 unknown)     |
 *  +---------------------------------------------------------------+
 *  |                    payload (length bytes)                    ... 48
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>The handshake, before any request ({@link TcpAuthenticator} computes the proofs; C connects, A accepts):
 *
 * <pre>
 *  C -> A  HELLO      token = incarnation C; aux = features C; payload = nonce C (32 bytes) | address C
 *  A -> C  CHALLENGE  token = incarnation A; aux = features A; payload = nonce A (32) | proof A (32) | address A
 *  C -> A  AUTH       payload = proof C (32); C's requests may follow at once
 *
 *  proof X = HMAC-SHA256(cluster key, "transfer-engine v2 " + role X | nonce C | nonce A | incarnation C
 *                        | incarnation A | address C | address A)
 * </pre>
 *
 * C checks A's proof before it proves itself or sends a request; A places nothing, allocates no connection buffers
 * and tells nothing but a version mismatch (ERROR) until C's proof checked out. A header with our magic but another
 * version is answered with ERROR (code {@link #ERROR_VERSION}, imm = {@value #VERSION}, payload = a message naming
 * both versions) and the connection closes.
 *
 * <p>Features: {@code aux} of HELLO and CHALLENGE holds the optional features its sender speaks
 * ({@link #FEATURE_REVERSE_ACK}, {@link #FEATURE_PAGE_TABLE}, {@link #FEATURE_READ_FAILED}); an engine of an earlier v3 release sends 0 and ignores the field, so a feature is
 * used only where both sides announced it. The proofs do not cover it: who could strip it could also drop the
 * connection, and without it the two sides speak plain v3.
 *
 * <p>Requests: WRITE and WRITE_IMM carry data for region {@code rkey} at {@code offset}; IMM is a zero-length
 * write that carries only the imm but still names a valid rkey and offset. SEND carries a two-sided message (rkey
 * and offset 0). ABANDON is a negative acknowledgement for imm waiters: an operation carrying {@code imm} failed at
 * the sender, and {@code rkey} holds how many of its imm events will not come; its payload is the sender's failure
 * as UTF-8 text (at most {@value #MAX_ABANDON_CAUSE} bytes). The receiver answers every request, in the order
 * received, with ACK or NACK naming the request's token.
 *
 * <p>Pages (since v3): WRITEV carries {@code aux} requests of one paged write to region {@code rkey} as one frame,
 * each a WRITE of its own with request id {@code token + i}; WRITEV_IMM carries WRITE_IMM (or IMM) pages the same
 * way. Its {@code length} counts every byte after the header: each page is a {@value #PAGE_HEADER_LENGTH}-byte page
 * header (offset int64, length int32, imm int32; the imm is 0 in a WRITEV) followed by the page's bytes. The
 * receiver checks and places each page as if it had come alone (key, bounds, access, imm admission), reports one
 * imm event per page of a WRITEV_IMM, and answers each page in order. An ACK answers {@code aux} requests at once:
 * ids {@code token} to {@code token + aux - 1}, all accepted ({@code length}: their bytes); a NACK answers one.
 *
 * <p>Page tables (feature {@link #FEATURE_PAGE_TABLE}): PAGES carries {@code aux} requests of one paged write to
 * region {@code rkey} as one frame, request ids {@code token} to {@code token + aux - 1}, at most
 * {@value TcpPageTable#MAX_PAGES}; PAGES_IMM likewise, every page carrying the header's {@code imm}. Its
 * {@code length} counts every byte after the header: first the page table, {@code aux} entries of
 * {@value #PAGE_ENTRY_LENGTH} bytes (offset int64, length int32), then the pages' bytes in table order. The receiver
 * reads the whole table before it places a byte and admits the frame whole or not at all: key, access, every page's
 * bounds and, for PAGES_IMM, the imm admission (one reservation for the {@code aux} imm events) are checked as for
 * each page alone; if one check fails, no page is placed and one NACK answers all {@code aux} requests with the
 * refusal of the first failing check ({@code imm} = the count of requests it refuses when above 1, a refusal code
 * that names no page). A region deregistered while the frame is placed refuses it whole the same way: pages already
 * copied are never reported. Admitted, the frame's pages report {@code aux} imm events (PAGES_IMM) and are answered
 * by one ACK of {@code aux} requests. A peer that did not announce the feature is sent WRITEV frames instead.
 *
 * <p>Reads (pull): READ asks the owner of region {@code rkey} for {@code length} bytes at {@code offset}; {@code imm}
 * holds the reader's read id. The owner checks key, bounds and access ({@code NOT_READABLE} for a write-only region)
 * and answers ACK or NACK in order as for any request; after an ACK it streams the bytes back on its own connection
 * to the reader (the address the reader proved in its handshake) as READ_DATA requests: {@code imm} = the read id,
 * {@code offset} = the offset within the read, {@code rkey} = 0, payload = the bytes (several frames for a staged
 * device region; one, possibly empty, otherwise). The reader places READ_DATA only if it names a read the reader has
 * pending from that peer and fits inside it; otherwise it NACKs it ({@code UNKNOWN_KEY}) and discards the bytes.
 *
 * <p>Read failures (feature {@link #FEATURE_READ_FAILED}): an owner that stops serving an accepted read part-way (the
 * staged device memory it copies from was freed or its region deregistered, or a copy off the device failed) sends
 * READ_FAILED on the connection that carried the read's READ_DATA, behind the frames it sent of it: {@code imm} = the
 * read id, {@code aux} = the reason ({@link TcpReadFailure}), {@code offset} = the bytes of the read it sent before,
 * {@code rkey} = 0, no payload. The reader answers it like any request and, in order behind the READ_DATA before it
 * (once their bytes are in place), fails that read if it still waits for it from that peer; it ignores one for a read
 * it no longer waits for, and refuses READ_DATA that comes for an ended read as above. An owner sends it only where
 * both sides announced the feature; without it the reader waits until its operation's deadline, as before. The same
 * agreement lets an owner that cannot serve a READ at all, having no room for a connection back to the reader
 * ({@code tcp.maxPeers}, every peer connected), answer it with a NACK {@link TcpRefusal#NO_PEER_ROOM} instead of the
 * ACK; a reader fails that read with back-pressure, and takes that code from a peer without the agreement as a
 * protocol error.
 *
 * <p>Reverse ACKs (feature {@link #FEATURE_REVERSE_ACK}): side B may answer requests that arrived on the connection
 * A opened to it with REVERSE_ACK frames on the connection B opened to A, in front of a request of its own that leaves
 * anyway: an imm answered by an imm then costs each side one socket write and one read per round trip instead of two.
 * REVERSE_ACK: {@code token} = the first request id, {@code aux} = the count of requests (>= 1), all accepted,
 * {@code length} = their bytes, {@code rkey} = the {@link #connectionId} of the connection whose requests it answers.
 * B sends one only where both connections announced the feature and A's incarnation is the same on both; NACKs
 * always go on the requests' own connection. An ACK held for a reverse ride waits at most {@code tcp.reverseAckMicros}
 * and then leaves on its own connection as usual, so answers of one connection may arrive out of request order:
 * A applies an answer that arrives before those of earlier requests once they came.
 *
 * <p>Not thread-safe; re-wrap for each header. Allocates nothing.
 */
final class TcpFrame {

    static final int MAGIC = 0x474E4554;
    static final byte VERSION = 3;
    static final int HEADER_LENGTH = 48;
    /** Bytes of the header of each page in a WRITEV or WRITEV_IMM frame: offset int64, length int32, imm int32. */
    static final int PAGE_HEADER_LENGTH = 16;

    static final byte HELLO = 1;
    static final byte WRITE = 2;
    static final byte WRITE_IMM = 3;
    static final byte IMM = 4;
    static final byte SEND = 5;
    static final byte ACK = 6;
    static final byte NACK = 7;
    static final byte CHALLENGE = 8;
    static final byte AUTH = 9;
    static final byte ERROR = 10;
    static final byte ABANDON = 11;
    static final byte READ = 12;
    static final byte READ_DATA = 13;
    static final byte WRITEV = 14;
    static final byte WRITEV_IMM = 15;
    static final byte REVERSE_ACK = 16;
    static final byte PAGES = 17;
    static final byte PAGES_IMM = 18;
    static final byte READ_FAILED = 19;

    /**
     * Feature bit in the {@code aux} of HELLO and CHALLENGE: this side reads {@link #REVERSE_ACK} frames on the
     * connections peers opened to it, and may send them on the connections it opened.
     */
    static final int FEATURE_REVERSE_ACK = 1;

    /**
     * Feature bit in the {@code aux} of HELLO and CHALLENGE: this side reads {@link #PAGES} and {@link #PAGES_IMM}
     * frames and NACKs that refuse several requests at once, on the connections peers opened to it, and sends them on
     * the connections it opened.
     */
    static final int FEATURE_PAGE_TABLE = 2;

    /**
     * Feature bit in the {@code aux} of HELLO and CHALLENGE: this side reads {@link #READ_FAILED} frames on the
     * connections peers opened to it, and sends them on the connections it opened.
     */
    static final int FEATURE_READ_FAILED = 4;

    /** Bytes of one page table entry of a PAGES or PAGES_IMM frame: offset int64, length int32. */
    static final int PAGE_ENTRY_LENGTH = 12;

    /** Most bytes of an ABANDON frame's cause text; longer causes are cut at the sender. */
    static final int MAX_ABANDON_CAUSE = 512;

    /** ERROR code: the peer speaks another protocol version (imm names the one the sender speaks). */
    static final int ERROR_VERSION = 1;
    /** Bytes of a handshake nonce. */
    static final int NONCE_LENGTH = 32;

    /** Most bytes a handshake frame may carry: nonce, proof and an encoded NetworkAddress, which is far smaller. */
    static final int MAX_HELLO_PAYLOAD = 511;
    /** Most bytes of an encoded address in a handshake. */
    static final int MAX_ADDRESS = 255;
    /** Larger WRITE lengths are absurd and mark the stream as corrupt. */
    static final long MAX_WRITE_PAYLOAD = 1L << 40;

    private static final int MAGIC_OFFSET = 0;
    private static final int VERSION_OFFSET = 4;
    private static final int TYPE_OFFSET = 5;
    private static final int FLAGS_OFFSET = 6;
    private static final int IMM_OFFSET = 8;
    private static final int AUX_OFFSET = 12;
    private static final int TOKEN_OFFSET = 16;
    private static final int RKEY_OFFSET = 24;
    private static final int OFFSET_OFFSET = 32;
    private static final int LENGTH_OFFSET = 40;

    private ByteBuffer buffer;
    private int base;

    TcpFrame(final ByteBuffer buffer) {
        this.buffer = buffer;
    }

    /** Points this flyweight at the header starting at {@code base}; the buffer must be little-endian. */
    TcpFrame wrap(final ByteBuffer buffer, final int base) {
        this.buffer = buffer;
        this.base = base;
        return this;
    }

    /** Points this flyweight at {@code base} within its current buffer. */
    TcpFrame at(final int base) {
        this.base = base;
        return this;
    }

    int magic() {
        return buffer.getInt(base + MAGIC_OFFSET);
    }

    byte version() {
        return buffer.get(base + VERSION_OFFSET);
    }

    byte type() {
        return buffer.get(base + TYPE_OFFSET);
    }

    short flags() {
        return buffer.getShort(base + FLAGS_OFFSET);
    }

    int imm() {
        return buffer.getInt(base + IMM_OFFSET);
    }

    int aux() {
        return buffer.getInt(base + AUX_OFFSET);
    }

    long token() {
        return buffer.getLong(base + TOKEN_OFFSET);
    }

    long rkey() {
        return buffer.getLong(base + RKEY_OFFSET);
    }

    long offset() {
        return buffer.getLong(base + OFFSET_OFFSET);
    }

    long length() {
        return buffer.getLong(base + LENGTH_OFFSET);
    }

    /** True if magic and version are ours. */
    boolean hasValidPreamble() {
        return magic() == MAGIC && version() == VERSION;
    }

    /** True if the magic is ours but the version is not: a peer of another release. */
    boolean hasOtherVersion() {
        return magic() == MAGIC && version() != VERSION;
    }

    /** Writes a whole header at the wrapped position. */
    void encode(
            final byte type,
            final int imm,
            final int aux,
            final long token,
            final long rkey,
            final long offset,
            final long length) {
        buffer.putInt(base + MAGIC_OFFSET, MAGIC)
                .put(base + VERSION_OFFSET, VERSION)
                .put(base + TYPE_OFFSET, type)
                .putShort(base + FLAGS_OFFSET, (short) 0)
                .putInt(base + IMM_OFFSET, imm)
                .putInt(base + AUX_OFFSET, aux)
                .putLong(base + TOKEN_OFFSET, token)
                .putLong(base + RKEY_OFFSET, rkey)
                .putLong(base + OFFSET_OFFSET, offset)
                .putLong(base + LENGTH_OFFSET, length);
    }

    /** Makes the ACK at the wrapped position answer {@code count} more requests of {@code bytes} bytes after its last. */
    void ackMore(final int count, final long bytes) {
        buffer.putInt(base + AUX_OFFSET, aux() + count).putLong(base + LENGTH_OFFSET, length() + bytes);
    }

    /**
     * The id a REVERSE_ACK names a connection by: the first 8 bytes of the nonce its connector sent in its HELLO,
     * random per connection, so an answer for a connection that was since replaced is recognised and dropped.
     */
    static long connectionId(final byte[] helloNonce) {
        return ByteBuffer.wrap(helloNonce, 0, Long.BYTES)
                .order(ByteOrder.LITTLE_ENDIAN)
                .getLong();
    }

    /** The UTF-8 payload of an ABANDON frame for {@code cause}, cut to {@link #MAX_ABANDON_CAUSE} bytes. */
    static byte[] abandonCause(final String cause) {
        final byte[] text = cause.getBytes(StandardCharsets.UTF_8);
        return text.length <= MAX_ABANDON_CAUSE ? text : Arrays.copyOf(text, MAX_ABANDON_CAUSE);
    }

    /**
     * Whether this side sends frames of {@code type} because it owes them to the peer, not for an operation of its
     * own: ABANDON (a negative acknowledgement), and a served read's READ_DATA and READ_FAILED. No listener waits for
     * them, and no queue bound refuses them.
     */
    static boolean isOwedToPeer(final byte type) {
        return type == ABANDON || type == READ_DATA || type == READ_FAILED;
    }

    /** A name for logs and error messages. */
    static String typeName(final byte type) {
        return switch (type) {
            case HELLO -> "HELLO";
            case WRITE -> "WRITE";
            case WRITE_IMM -> "WRITE_IMM";
            case IMM -> "IMM";
            case SEND -> "SEND";
            case ACK -> "ACK";
            case NACK -> "NACK";
            case CHALLENGE -> "CHALLENGE";
            case AUTH -> "AUTH";
            case ERROR -> "ERROR";
            case ABANDON -> "ABANDON";
            case READ -> "READ";
            case READ_DATA -> "READ_DATA";
            case WRITEV -> "WRITEV";
            case WRITEV_IMM -> "WRITEV_IMM";
            case REVERSE_ACK -> "REVERSE_ACK";
            case PAGES -> "PAGES";
            case PAGES_IMM -> "PAGES_IMM";
            case READ_FAILED -> "READ_FAILED";
            default -> "type " + (type & 0xFF);
        };
    }
}
