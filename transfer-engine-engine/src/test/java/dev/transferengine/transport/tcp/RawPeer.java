package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/** A hand-driven client socket that speaks (or mangles) the frame protocol, for tests. */
final class RawPeer implements AutoCloseable {

    private final SocketChannel channel;
    private final ByteBuffer received = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    private boolean closedByPeer;
    /** The features its HELLO announces ({@link TcpFrame}); none unless set. */
    private int features;

    RawPeer(final TcpDomain target) throws IOException {
        this(target, 0);
    }

    /** Connects with a receive buffer of {@code receiveBuffer} bytes (0: the kernel's default). */
    RawPeer(final TcpDomain target, final int receiveBuffer) throws IOException {
        this(new InetSocketAddress(InetAddress.getLoopbackAddress(), TcpDomains.port(target)), receiveBuffer);
    }

    /** Connects to {@code target}, e.g. an engine's NIC, with a receive buffer of {@code receiveBuffer} bytes. */
    RawPeer(final InetSocketAddress target, final int receiveBuffer) throws IOException {
        this(target, null, receiveBuffer);
    }

    /** Connects to {@code target} from {@code local} (e.g. 127.0.0.2, another loopback source), null: any. */
    RawPeer(final InetSocketAddress target, final @Nullable InetAddress local, final int receiveBuffer)
            throws IOException {
        channel = SocketChannel.open();
        if (local != null) {
            channel.bind(new InetSocketAddress(local, 0));
        }
        channel.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
        if (receiveBuffer > 0) {
            channel.setOption(java.net.StandardSocketOptions.SO_RCVBUF, receiveBuffer);
        }
        channel.connect(target);
        channel.configureBlocking(false);
    }

    /** A frame header as {@link TcpFrame} lays it out. */
    static ByteBuffer header(
            final byte type, final int imm, final long token, final long rkey, final long offset, final long length) {
        final ByteBuffer header = ByteBuffer.allocate(TcpFrame.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        new TcpFrame(header).encode(type, imm, 0, token, rkey, offset, length);
        return header;
    }

    /** The address a raw peer announces: nobody listens on it. */
    static final byte[] ADDRESS = TcpAddress.toNetworkAddress(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), 9))
            .toBytes();
    /** The incarnation a raw peer announces. */
    static final long INCARNATION = 0x1234;

    /** A well-formed HELLO with {@code nonce}, announcing {@link #ADDRESS}. */
    static ByteBuffer hello(final byte[] nonce) {
        return hello(nonce, ADDRESS, INCARNATION);
    }

    /** A well-formed HELLO with {@code nonce}, announcing {@code address} and {@code incarnation}, no features. */
    static ByteBuffer hello(final byte[] nonce, final byte[] address, final long incarnation) {
        return hello(nonce, address, incarnation, 0);
    }

    /** A well-formed HELLO like {@link #hello(byte[], byte[], long)}, announcing {@code features} too. */
    static ByteBuffer hello(final byte[] nonce, final byte[] address, final long incarnation, final int features) {
        final ByteBuffer header = header(TcpFrame.HELLO, 0, incarnation, 0, 0, nonce.length + address.length);
        new TcpFrame(header).encode(TcpFrame.HELLO, 0, features, incarnation, 0, 0, nonce.length + address.length);
        return ByteBuffer.allocate(header.capacity() + nonce.length + address.length)
                .put(header)
                .put(nonce)
                .put(address)
                .flip();
    }

    /** Runs the handshake with the public key (no cluster key); see {@link #authenticate(TcpDomain, List)}. */
    RawPeer authenticate(final TcpDomain target) throws IOException {
        return authenticate(target, List.of());
    }

    /**
     * Runs the connector's side of the handshake with {@code keys}, polling {@code target} until its CHALLENGE
     * arrives; afterwards {@link #answer(int)} counts from the first frame after the CHALLENGE.
     */
    RawPeer authenticate(final TcpDomain target, final List<byte[]> keys) throws IOException {
        return authenticate(target.address(), keys, target::poll);
    }

    /** The handshake with a NIC that {@code poll} drives (a no-op for an engine's NIC, which its worker drives). */
    RawPeer authenticate(final NetworkAddress target, final List<byte[]> keys, final Runnable poll) throws IOException {
        return authenticate(target, keys, poll, ADDRESS, INCARNATION, features);
    }

    /**
     * The handshake with the public key, announcing {@code address}, {@code incarnation} and {@code features}: e.g.
     * as the peer that {@code target} dialled at that address, opening the connection back to it.
     */
    RawPeer authenticateAs(final TcpDomain target, final byte[] address, final long incarnation, final int features)
            throws IOException {
        return authenticate(target.address(), List.of(), target::poll, address, incarnation, features);
    }

    private RawPeer authenticate(
            final NetworkAddress target,
            final List<byte[]> keys,
            final Runnable poll,
            final byte[] address,
            final long incarnation,
            final int features)
            throws IOException {
        final TcpAuthenticator authenticator = new TcpAuthenticator(keys);
        final byte[] nonce = authenticator.newNonce();
        send(hello(nonce, address, incarnation, features));
        final int challengeLength = TcpFrame.HEADER_LENGTH
                + TcpFrame.NONCE_LENGTH
                + TcpAuthenticator.PROOF_LENGTH
                + target.toBytes().length;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (receivedBytes() < challengeLength) {
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("no CHALLENGE within 30 s");
            }
            poll.run();
        }
        final TcpFrame challenge = new TcpFrame(received).wrap(received, 0);
        if (challenge.type() != TcpFrame.CHALLENGE) {
            throw new IOException("expected CHALLENGE, got " + TcpFrame.typeName(challenge.type()));
        }
        final byte[] peerNonce = new byte[TcpFrame.NONCE_LENGTH];
        received.get(TcpFrame.HEADER_LENGTH, peerNonce);
        final byte[] proof = authenticator.prove(
                false,
                new TcpAuthenticator.Handshake(
                        nonce, incarnation, address, peerNonce, challenge.token(), target.toBytes()));
        received.flip().position(challengeLength);
        received.compact();
        return send(ByteBuffer.allocate(TcpFrame.HEADER_LENGTH + proof.length)
                .put(header(TcpFrame.AUTH, 0, 0, 0, 0, proof.length))
                .put(proof)
                .flip());
    }

    /** Makes the HELLO of the next {@link #authenticate} announce {@code announced} ({@link TcpFrame} feature bits). */
    RawPeer features(final int announced) {
        this.features = announced;
        return this;
    }

    RawPeer send(final ByteBuffer bytes) throws IOException {
        final ByteBuffer toSend = bytes.duplicate().rewind();
        while (toSend.hasRemaining()) {
            channel.write(toSend);
        }
        return this;
    }

    /** Sends everything, polling {@code target} whenever the socket is full, without reading answers. */
    RawPeer send(final ByteBuffer bytes, final TcpDomain target) throws IOException {
        final ByteBuffer toSend = bytes.duplicate().rewind();
        while (toSend.hasRemaining()) {
            if (channel.write(toSend) == 0) {
                target.poll();
            }
        }
        return this;
    }

    RawPeer send(final byte[] bytes) throws IOException {
        return send(ByteBuffer.wrap(bytes));
    }

    /** Reads what has arrived; true once the domain closed this connection. */
    boolean closedByPeer() {
        if (!closedByPeer) {
            try {
                closedByPeer = channel.read(received) < 0;
            } catch (final IOException reset) {
                closedByPeer = true;
            }
        }
        return closedByPeer;
    }

    /** Bytes received so far. */
    int receivedBytes() {
        closedByPeer();
        return received.position();
    }

    /** Copies received bytes from {@code offset} into {@code into}. */
    void receivedAt(final int offset, final byte[] into) {
        received.get(offset, into);
    }

    /** The header of the {@code index}-th answer after the handshake. */
    TcpFrame answer(final int index) {
        return new TcpFrame(received).wrap(received, index * TcpFrame.HEADER_LENGTH);
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
