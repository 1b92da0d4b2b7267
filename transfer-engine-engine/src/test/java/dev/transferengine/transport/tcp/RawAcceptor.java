package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * A hand-driven listening socket that a domain dials: it accepts one connection and answers its HELLO as an acceptor
 * does (the public key, the features it is told to announce), then hands the test the request frames that follow and
 * sends the answers the test writes, in the order the test chooses. Its mirror is {@link RawPeer}, the connector.
 */
final class RawAcceptor implements AutoCloseable {

    /** The incarnation it announces. */
    static final long INCARNATION = 0x5678;

    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final ServerSocketChannel listener;
    private final ByteBuffer received = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    private final long started = System.nanoTime();
    private @Nullable SocketChannel channel;
    /** The first 8 bytes of the dialler's HELLO nonce: how REVERSE_ACK frames name its connection. */
    private long connectionId;

    RawAcceptor() throws IOException {
        listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        listener.configureBlocking(false);
    }

    /** The address it listens on and announces. */
    NetworkAddress address() throws IOException {
        return TcpAddress.toNetworkAddress((InetSocketAddress) listener.getLocalAddress());
    }

    /** The id of the accepted connection, for the REVERSE_ACK frames that answer its requests elsewhere. */
    long connectionId() {
        return connectionId;
    }

    /**
     * Accepts {@code dialler}'s connection and runs the acceptor's side of the handshake, announcing {@code features},
     * polling {@code dialler} meanwhile; returns once its AUTH arrived.
     */
    RawAcceptor accept(final TcpDomain dialler, final int features) throws IOException {
        SocketChannel accepted;
        while ((accepted = listener.accept()) == null) {
            poll(dialler, "a connection");
        }
        accepted.configureBlocking(false);
        channel = accepted;
        final TcpFrame hello = await(dialler, 0, "HELLO");
        final byte[] dialNonce = new byte[TcpFrame.NONCE_LENGTH];
        final byte[] dialAddress = new byte[(int) hello.length() - TcpFrame.NONCE_LENGTH];
        received.get(TcpFrame.HEADER_LENGTH, dialNonce).get(TcpFrame.HEADER_LENGTH + dialNonce.length, dialAddress);
        connectionId = TcpFrame.connectionId(dialNonce);
        final TcpAuthenticator authenticator = new TcpAuthenticator(List.of());
        final byte[] nonce = authenticator.newNonce();
        final byte[] self = address().toBytes();
        final byte[] proof = authenticator.prove(
                true, new TcpAuthenticator.Handshake(dialNonce, hello.token(), dialAddress, nonce, INCARNATION, self));
        final int payload = nonce.length + proof.length + self.length;
        final ByteBuffer challenge =
                ByteBuffer.allocate(TcpFrame.HEADER_LENGTH + payload).order(ByteOrder.LITTLE_ENDIAN);
        new TcpFrame(challenge).encode(TcpFrame.CHALLENGE, 0, features, INCARNATION, 0, 0, payload);
        send(challenge
                .position(TcpFrame.HEADER_LENGTH)
                .put(nonce)
                .put(proof)
                .put(self)
                .flip());
        consume(TcpFrame.HEADER_LENGTH + (int) hello.length());
        consume(TcpFrame.HEADER_LENGTH
                + (int) await(dialler, TcpAuthenticator.PROOF_LENGTH, "AUTH").length());
        return this;
    }

    /**
     * The next frame the dialler sends, a request without payload (e.g. an imm-only write, or a READ), polling it
     * meanwhile.
     */
    TcpFrame nextRequest(final TcpDomain dialler) throws IOException {
        final TcpFrame request = await(dialler, 0, "a request");
        final ByteBuffer header = ByteBuffer.allocate(TcpFrame.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        header.put(0, received, 0, TcpFrame.HEADER_LENGTH);
        consume(TcpFrame.HEADER_LENGTH + (int) payload(request));
        return new TcpFrame(header);
    }

    /** Sends a frame without payload on the accepted connection, e.g. an answer. */
    void sendFrame(final byte type, final int aux, final long token, final long length) throws IOException {
        final ByteBuffer frame = ByteBuffer.allocate(TcpFrame.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        new TcpFrame(frame).encode(type, 0, aux, token, 0, 0, length);
        send(frame);
    }

    private TcpFrame await(final TcpDomain dialler, final int payloadAtLeast, final String what) throws IOException {
        final TcpFrame frame = new TcpFrame(received);
        while (received.position() < TcpFrame.HEADER_LENGTH
                || received.position() < TcpFrame.HEADER_LENGTH + Math.max(payloadAtLeast, payload(frame))) {
            if (channel().read(received) < 0) {
                throw new IOException("the dialler closed the connection before " + what);
            }
            poll(dialler, what);
        }
        return frame;
    }

    /** The payload bytes that follow the header: none for a READ, whose length is the length it asks for. */
    private static long payload(final TcpFrame frame) {
        return frame.type() == TcpFrame.READ ? 0 : frame.length();
    }

    private void consume(final int bytes) {
        received.flip().position(bytes);
        received.compact();
    }

    private void send(final ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) {
            channel().write(bytes);
        }
    }

    private SocketChannel channel() {
        final SocketChannel accepted = channel;
        if (accepted == null) {
            throw new IllegalStateException("no connection accepted yet");
        }
        return accepted;
    }

    private void poll(final TcpDomain dialler, final String what) throws IOException {
        if (System.nanoTime() - started > DEADLINE_NANOS) {
            throw new IOException("no " + what + " within 30 s of opening");
        }
        dialler.poll();
    }

    @Override
    public void close() throws IOException {
        if (channel != null) {
            channel.close();
        }
        listener.close();
    }
}
