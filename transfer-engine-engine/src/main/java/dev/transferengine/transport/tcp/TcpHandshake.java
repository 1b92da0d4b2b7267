package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.MalformedDescriptorException;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The acceptor's side of the handshake on a connection a peer opened (see {@link TcpFrame}): reads HELLO, answers
 * CHALLENGE with this side's proof, reads AUTH and checks the peer's proof. Only then does the domain turn the
 * socket into a {@link TcpInbound} with pooled buffers; until then the connection holds two small heap buffers,
 * places nothing, announces nothing and is told nothing but a version mismatch. Anything else ends it silently
 * (counted), so an unauthenticated peer learns nothing about keys or regions. Worker thread only.
 */
final class TcpHandshake {

    /**
     * Who proved itself on a connection: the address and incarnation it announced, whether it reads REVERSE_ACK
     * frames ({@link TcpFrame#FEATURE_REVERSE_ACK}) and the id they name the connection by, whether it may send
     * PAGES frames ({@link TcpFrame#FEATURE_PAGE_TABLE}) and READ_FAILED frames ({@link TcpFrame#FEATURE_READ_FAILED}).
     */
    record Connector(
            NetworkAddress address,
            long incarnation,
            boolean readsReverseAcks,
            long connectionId,
            boolean sendsPageTables,
            boolean sendsReadFailures) {}

    /** The first byte of a TLS handshake record (a ClientHello); never the first byte of our magic. */
    private static final byte TLS_HANDSHAKE_RECORD = 0x16;
    /** A HELLO, then an AUTH, then the first requests the peer pipelined behind it. */
    private static final int IN_CAPACITY = 2 * (TcpFrame.HEADER_LENGTH + TcpFrame.MAX_HELLO_PAYLOAD);

    private final TcpIo io;
    private final TcpTargets targets;
    private final SocketChannel channel;
    /** Whether the NIC speaks TLS: the connection's TLS starts with its first bytes. */
    private final boolean tlsExpected;
    /** Null until the first bytes arrive on a TLS NIC, and always without TLS. */
    private @Nullable TcpTls tls;

    private final SelectionKey key;
    private final long deadlineNanos;
    private final String remote;
    private final @Nullable InetAddress source;
    private final ByteBuffer in = ByteBuffer.allocate(IN_CAPACITY).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer out = ByteBuffer.allocate(TcpFrame.HEADER_LENGTH + TcpFrame.MAX_HELLO_PAYLOAD)
            .order(ByteOrder.LITTLE_ENDIAN);
    private final TcpFrame frame = new TcpFrame(in);
    private byte @Nullable [] connectorNonce;
    private long connectorIncarnation;
    private int connectorFeatures;
    private byte[] connectorAddress = new byte[0];
    private @Nullable NetworkAddress announced;
    private byte[] acceptorNonce = new byte[0];
    private boolean closeAfterWrite;
    private boolean done;

    TcpHandshake(
            final TcpIo io,
            final TcpTargets targets,
            final SocketChannel channel,
            final boolean tlsExpected,
            final long deadlineNanos)
            throws IOException {
        this.io = io;
        this.targets = targets;
        this.channel = channel;
        this.tlsExpected = tlsExpected;
        this.deadlineNanos = deadlineNanos;
        final SocketAddress remoteAddress = channel.getRemoteAddress();
        this.remote = String.valueOf(remoteAddress);
        this.source = remoteAddress instanceof InetSocketAddress inet ? inet.getAddress() : null;
        this.key = channel.register(io.selector(), SelectionKey.OP_READ, this);
        out.limit(0);
    }

    boolean expired(final long nowNanos) {
        return !done && nowNanos - deadlineNanos >= 0;
    }

    String remote() {
        return remote;
    }

    /** The address the connection came from, which its per-source bound counts; null if the socket closed. */
    @Nullable InetAddress source() {
        return source;
    }

    /** The connection's TLS, handed on to the inbound connection; null without TLS. */
    @Nullable TcpTls tls() {
        return tls;
    }

    /** Handles readiness; returns the work done. */
    int onReady(final int readyOps) throws IOException {
        final int work = handle(readyOps);
        if (tls != null && key.isValid() && !done) {
            if (tls.pendingOutput()) {
                key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            }
            if (tls.pendingInput()) {
                io.readAgain(key);
            }
        }
        return work;
    }

    private int handle(final int readyOps) throws IOException {
        if ((readyOps & SelectionKey.OP_WRITE) != 0 && writeOut()) {
            return 1;
        }
        if ((readyOps & SelectionKey.OP_READ) == 0 || done) {
            return 0;
        }
        if (tlsExpected && tls == null) {
            // Only now, with a ClientHello to read: a socket that says nothing costs no SSLEngine and no record
            // buffers while it waits for its timeout (issue 16, item 2).
            tls = io.tls(channel, null);
        }
        final TcpTls connectionTls = tls;
        final int read = connectionTls == null ? channel.read(in) : connectionTls.read(in);
        if (read < 0) {
            fail(TcpCounter.HANDSHAKE_CLOSED, "closed by the peer during the handshake");
            return 1;
        }
        if (read == 0) {
            return 0;
        }
        while (!done && in.position() >= TcpFrame.HEADER_LENGTH) {
            frame.at(0);
            if (frame.hasOtherVersion()) {
                refuseVersion(frame.version());
                return 1;
            }
            if (!tlsExpected && in.get(0) == TLS_HANDSHAKE_RECORD) {
                fail(TcpCounter.HANDSHAKE_TLS, "the peer speaks TLS; this NIC has no TLS configured");
                return 1;
            }
            if (!frame.hasValidPreamble() || frame.flags() != 0) {
                fail(TcpCounter.HANDSHAKE_MALFORMED, "not a transfer-engine handshake");
                return 1;
            }
            // Judge the header before waiting for its payload: a wrong one must not hold the socket until timeout.
            final byte type = frame.type();
            final long length = frame.length();
            final boolean hello = type == TcpFrame.HELLO
                    && connectorNonce == null
                    && length >= TcpFrame.NONCE_LENGTH + 3
                    && length <= TcpFrame.NONCE_LENGTH + TcpFrame.MAX_ADDRESS;
            final boolean auth =
                    type == TcpFrame.AUTH && connectorNonce != null && length == TcpAuthenticator.PROOF_LENGTH;
            if (!hello && !auth) {
                fail(
                        TcpCounter.HANDSHAKE_MALFORMED,
                        TcpFrame.typeName(type) + " of " + length + " bytes "
                                + (connectorNonce == null ? "instead of HELLO" : "instead of AUTH"));
                return 1;
            }
            final int frameLength = TcpFrame.HEADER_LENGTH + (int) length;
            if (in.position() < frameLength) {
                return 1;
            }
            if (hello) {
                onHello((int) length);
            } else {
                onAuth();
            }
            if (!key.isValid() || closeAfterWrite) {
                return 1;
            }
            // Keep what follows the frame: a pipelined AUTH or, after it, the first requests.
            in.flip().position(frameLength);
            in.compact();
            if (done) {
                in.flip();
                final byte[] helloNonce = Objects.requireNonNull(connectorNonce, "HELLO was read");
                final boolean reverseAcks = (io.features() & connectorFeatures & TcpFrame.FEATURE_REVERSE_ACK) != 0;
                targets.onAuthenticated(
                        this,
                        channel,
                        new Connector(
                                Objects.requireNonNull(announced, "HELLO was read"),
                                connectorIncarnation,
                                reverseAcks,
                                TcpFrame.connectionId(helloNonce),
                                (io.features() & connectorFeatures & TcpFrame.FEATURE_PAGE_TABLE) != 0,
                                (io.features() & connectorFeatures & TcpFrame.FEATURE_READ_FAILED) != 0),
                        in);
            }
        }
        return 1;
    }

    private void onHello(final int length) {
        final byte[] nonce = new byte[TcpFrame.NONCE_LENGTH];
        in.get(TcpFrame.HEADER_LENGTH, nonce);
        final byte[] address = new byte[length - TcpFrame.NONCE_LENGTH];
        in.get(TcpFrame.HEADER_LENGTH + TcpFrame.NONCE_LENGTH, address);
        try {
            final NetworkAddress parsed = NetworkAddress.fromBytes(address);
            TcpAddress.toSocketAddress(parsed);
            announced = parsed;
        } catch (final MalformedDescriptorException e) {
            fail(TcpCounter.HANDSHAKE_MALFORMED, "HELLO with a malformed address: " + e.getMessage());
            return;
        }
        connectorNonce = nonce;
        connectorIncarnation = frame.token();
        connectorFeatures = frame.aux();
        connectorAddress = address;
        acceptorNonce = io.authenticator().newNonce();
        final byte[] self = io.addressBytes();
        final byte[] proof = io.authenticator().prove(true, handshake());
        final int payload = TcpFrame.NONCE_LENGTH + TcpAuthenticator.PROOF_LENGTH + self.length;
        out.clear();
        new TcpFrame(out).encode(TcpFrame.CHALLENGE, 0, io.features(), io.incarnation(), 0, 0, payload);
        out.position(TcpFrame.HEADER_LENGTH)
                .put(acceptorNonce)
                .put(proof)
                .put(self)
                .flip();
        writeOutQuietly();
    }

    private void onAuth() {
        final byte[] proof = new byte[TcpAuthenticator.PROOF_LENGTH];
        in.get(TcpFrame.HEADER_LENGTH, proof);
        if (!io.authenticator().verify(false, handshake(), proof)) {
            fail(TcpCounter.HANDSHAKE_AUTH_FAILED, "the peer's proof matches no accepted cluster key");
            return;
        }
        done = true;
    }

    private TcpAuthenticator.Handshake handshake() {
        return new TcpAuthenticator.Handshake(
                Objects.requireNonNull(connectorNonce, "HELLO was read"),
                connectorIncarnation,
                connectorAddress,
                acceptorNonce,
                io.incarnation(),
                io.addressBytes());
    }

    /** Tells a peer of another version which one we speak, then closes: the one thing said before authentication. */
    private void refuseVersion(final byte theirs) {
        final byte[] message = ("transfer-engine wire protocol v" + (theirs & 0xFF) + " is not supported: this "
                        + "engine speaks v" + TcpFrame.VERSION)
                .getBytes(StandardCharsets.US_ASCII);
        out.clear();
        new TcpFrame(out).encode(TcpFrame.ERROR, TcpFrame.VERSION, TcpFrame.ERROR_VERSION, 0, 0, 0, message.length);
        out.position(TcpFrame.HEADER_LENGTH).put(message).flip();
        io.count(TcpCounter.HANDSHAKE_VERSION, remote, new String(message, StandardCharsets.US_ASCII));
        closeAfterWrite = true;
        writeOutQuietly();
    }

    private void writeOutQuietly() {
        try {
            writeOut();
        } catch (final IOException e) {
            fail(TcpCounter.HANDSHAKE_CLOSED, "write failed during the handshake: " + e.getMessage());
        }
    }

    /** Writes what is pending; returns true if the connection was closed as a result. */
    private boolean writeOut() throws IOException {
        if (!key.isValid()) {
            return true;
        }
        if (tls == null) {
            channel.write(out);
        } else {
            tls.write(out);
        }
        if (out.hasRemaining() || (tls != null && tls.pendingOutput())) {
            key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            return false;
        }
        key.interestOps(SelectionKey.OP_READ);
        if (closeAfterWrite) {
            targets.onHandshakeEnded(this);
            close();
            return true;
        }
        return false;
    }

    /** Counts and logs (rate limited) why the handshake failed, then closes it. */
    void fail(final TcpCounter counter, final String why) {
        if (!key.isValid()) {
            return;
        }
        io.count(counter, remote, why);
        targets.onHandshakeEnded(this);
        close();
    }

    void close() {
        key.cancel();
        try {
            channel.close();
        } catch (final IOException ignored) {
            // An unauthenticated socket being dropped: nothing to tell its peer.
        }
    }
}
