package dev.transferengine.transport.tcp;

import java.nio.ByteBuffer;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;

/**
 * The engine's own record layer beside TLS (issue 16 item 7, docs/security.md "Engine records"): how a TLS connection
 * agrees to use it, and what its records look like. JSSE keeps the TLS handshake, its post-handshake messages and the
 * cluster-key handshake; once a connection is authenticated, each direction switches to records of up to
 * {@value #MAX_PLAINTEXT} bytes sealed with AES-GCM under keys exported from the TLS session
 * ({@link TcpRecordCipher}), sealed and opened on the connection's socket thread ({@link TcpTlsPipe}).
 *
 * <p>Agreement: each side offers {@value #PROTOCOL} through ALPN; both use engine records only if it was chosen and
 * TLS 1.3 was negotiated. ALPN travels in the TLS handshake, which the Finished messages authenticate, so an attacker
 * cannot strip the offer; an engine that does not offer it (an older one, or {@code tcp.tlsRecords=jsse}) keeps JSSE
 * records for the whole connection.
 *
 * <p>A sealed record: one type byte ({@value #TYPE}, which no TLS record has), the protected length (4 bytes, big
 * endian: ciphertext and the 16-byte tag), then the protected bytes; the 5 header bytes are the AEAD's additional
 * data. The first record of a direction (the switch record) holds 8 bytes: how many plaintext bytes the side sent
 * through JSSE before it switched; the receiver checks them against what it unwrapped, so JSSE records cut off before
 * the switch fail the connection. Records opened on the socket thread reach the worker with the same header, the
 * length then that of the plaintext that follows.
 */
final class TcpRecords {

    /** The ALPN protocol name that offers engine records. */
    static final String PROTOCOL = "transfer-engine-records/1";

    /** The first byte of every engine record: no TLS content type (20 to 24, TLS reserves up to 63). */
    static final byte TYPE = (byte) 0xE1;

    /** Type byte and length. */
    static final int HEADER = 5;

    /** AES-GCM's tag. */
    static final int TAG = 16;

    /** A TLS record's header: type, version, length. */
    static final int TLS_HEADER = 5;

    /**
     * The buffers of a connection with engine records (four per direction, and one the socket thread reads into):
     * one holds a record of the largest size.
     */
    static final int BUFFER = 256 * 1024;

    /** The most plaintext one record carries: a record with its header and tag fills one buffer. */
    static final int MAX_PLAINTEXT = BUFFER - HEADER - TAG;

    /** Plaintext of a switch record: the JSSE plaintext bytes sent before it, as a long. */
    static final int SWITCH_PLAINTEXT = Long.BYTES;

    private static final String[] OFFER = {PROTOCOL};

    private TcpRecords() {}

    /** Offers engine records on {@code engine} (before its handshake): the client lists them, the server picks them. */
    static void offer(final SSLEngine engine) {
        if (engine.getUseClientMode()) {
            final SSLParameters parameters = engine.getSSLParameters();
            parameters.setApplicationProtocols(OFFER);
            engine.setSSLParameters(parameters);
        } else {
            // "" when the client did not offer them: no ALPN, JSSE records (null would fail the handshake).
            engine.setHandshakeApplicationProtocolSelector(TcpRecords::choose);
        }
    }

    private static String choose(final SSLEngine engine, final List<String> offered) {
        return offered.contains(PROTOCOL) ? PROTOCOL : "";
    }

    /** Whether both sides agreed on engine records: {@value #PROTOCOL} chosen, TLS 1.3. After the handshake only. */
    static boolean negotiated(final SSLEngine engine) {
        return PROTOCOL.equals(engine.getApplicationProtocol())
                && "TLSv1.3".equals(engine.getSession().getProtocol());
    }

    /**
     * The length of the record starting at {@code at} in {@code buffer} with its header (an engine record or a TLS
     * one), or -1 if its header is not complete before {@code end}.
     */
    static int wireLength(final ByteBuffer buffer, final int at, final int end) {
        if (end - at < HEADER) {
            return -1;
        }
        if (buffer.get(at) == TYPE) {
            // A negative length (a forged high bit) reads as huge: the caller refuses it as too long.
            final int length = buffer.getInt(at + 1);
            return length < 0 || length > Integer.MAX_VALUE - HEADER ? Integer.MAX_VALUE : HEADER + length;
        }
        return TLS_HEADER + (((buffer.get(at + 3) & 0xFF) << 8) | (buffer.get(at + 4) & 0xFF));
    }

    /** Puts a switch record to seal after {@code out}'s limit, naming the {@code jsseSent} bytes before it. */
    static void putSwitch(final ByteBuffer out, final long jsseSent) {
        final int at = out.limit();
        out.limit(at + HEADER + SWITCH_PLAINTEXT + TAG);
        out.put(at, TYPE).putInt(at + 1, SWITCH_PLAINTEXT + TAG).putLong(at + HEADER, jsseSent);
    }

    /**
     * Copies {@code srcs} into records to seal after {@code out}'s limit (header, plaintext, room for the tag), as
     * many as fit before its capacity, and moves the limit past them; returns the plaintext bytes taken.
     */
    static long putRecords(final ByteBuffer out, final ByteBuffer[] srcs) {
        long taken = 0;
        int at = out.limit();
        out.limit(out.capacity());
        while (out.capacity() - at > HEADER + TAG && remaining(srcs)) {
            final int plaintext = (int) Math.min(room(srcs), out.capacity() - at - HEADER - TAG);
            out.put(at, TYPE).putInt(at + 1, plaintext + TAG);
            int into = at + HEADER;
            for (final ByteBuffer src : srcs) {
                final int n = Math.min(src.remaining(), at + HEADER + plaintext - into);
                out.put(into, src, src.position(), n);
                src.position(src.position() + n);
                into += n;
            }
            at = into + TAG;
            taken += plaintext;
        }
        out.limit(at);
        return taken;
    }

    /**
     * Takes the header of the opened record at {@code in}'s position; returns the length of its plaintext, which
     * follows.
     *
     * @throws SSLException if a TLS record is there: nothing but engine records may follow a switch
     */
    static int takeOpened(final ByteBuffer in) throws SSLException {
        final int at = in.position();
        if (in.get(at) != TYPE) {
            throw new SSLException("a TLS record after the peer switched to engine records");
        }
        in.position(at + HEADER);
        return in.getInt(at + 1);
    }

    /** Takes the opened switch record at {@code in}'s position; returns the JSSE bytes the peer says it sent before. */
    static long takeSwitch(final ByteBuffer in) throws SSLException {
        final int length = takeOpened(in);
        if (length != SWITCH_PLAINTEXT) {
            throw new SSLException("the peer's first engine record holds " + length + " bytes, not a switch record");
        }
        final long sent = in.getLong(in.position());
        in.position(in.position() + SWITCH_PLAINTEXT);
        return sent;
    }

    /** Copies up to {@code most} bytes from {@code from} into {@code dsts} in order; returns how many. */
    static int copyOut(final ByteBuffer from, final ByteBuffer[] dsts, final int most) {
        int left = (int) Math.min(most, room(dsts));
        final int copied = left;
        for (int i = 0; i < dsts.length && left > 0; i++) {
            final ByteBuffer dst = dsts[i];
            final int part = Math.min(dst.remaining(), left);
            dst.put(dst.position(), from, from.position(), part);
            dst.position(dst.position() + part);
            from.position(from.position() + part);
            left -= part;
        }
        return copied;
    }

    /** Bytes {@code buffers} hold, or can take, in all. */
    static long room(final ByteBuffer[] buffers) {
        long room = 0;
        for (final ByteBuffer buffer : buffers) {
            room += buffer.remaining();
        }
        return room;
    }

    /** Whether any of {@code buffers} has bytes left. */
    static boolean remaining(final ByteBuffer[] buffers) {
        for (final ByteBuffer buffer : buffers) {
            if (buffer.hasRemaining()) {
                return true;
            }
        }
        return false;
    }
}
