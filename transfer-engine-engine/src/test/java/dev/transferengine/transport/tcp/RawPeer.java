package dev.transferengine.transport.tcp;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/** A hand-driven client socket that speaks (or mangles) the frame protocol, for tests. */
final class RawPeer implements AutoCloseable {

    private final SocketChannel channel;
    private final ByteBuffer received = ByteBuffer.allocate(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    private boolean closedByPeer;

    RawPeer(final TcpDomain target) throws IOException {
        this(target, 0);
    }

    /** Connects with a receive buffer of {@code receiveBuffer} bytes (0: the kernel's default). */
    RawPeer(final TcpDomain target, final int receiveBuffer) throws IOException {
        channel = SocketChannel.open();
        if (receiveBuffer > 0) {
            channel.setOption(java.net.StandardSocketOptions.SO_RCVBUF, receiveBuffer);
        }
        channel.connect(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), target.port()));
        channel.configureBlocking(false);
    }

    /** A frame header as {@link TcpFrame} lays it out. */
    static ByteBuffer header(final byte type, final int imm, final long token, final long rkey, final long offset,
                             final long length) {
        final ByteBuffer header = ByteBuffer.allocate(TcpFrame.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        new TcpFrame(header).encode(type, imm, 0, token, rkey, offset, length);
        return header;
    }

    /** A valid HELLO announcing an address nobody listens on. */
    static ByteBuffer hello() {
        final byte[] self = TcpAddress.toNetAddr(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 9)).toBytes();
        final ByteBuffer header = header(TcpFrame.HELLO, 0, 0x1234, 0, 0, self.length);
        return ByteBuffer.allocate(header.capacity() + self.length).put(header).put(self).flip();
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

    /** The header of the {@code index}-th answer after the HELLO that came first. */
    TcpFrame answer(final int index, final int helloLength) {
        return new TcpFrame(received).wrap(received, helloLength + index * TcpFrame.HEADER_LENGTH);
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
