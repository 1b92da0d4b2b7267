package dev.transferengine.transport.tcp;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import org.jspecify.annotations.Nullable;

/**
 * Forwards bytes both ways between a dialler and {@code target}, on two threads of blocking sockets; once armed,
 * flips one byte of the dialler's stream, or cuts it (the target then reads the end of the stream).
 */
final class TlsRelay {

    private final ServerSocketChannel listener;
    private final InetSocketAddress target;
    private volatile long forwardedUp;
    private volatile long flipAt = Long.MAX_VALUE;
    private volatile long cutAt = Long.MAX_VALUE;
    private volatile @Nullable SocketChannel down;
    private volatile @Nullable SocketChannel up;

    TlsRelay(final SocketAddress target) throws IOException {
        this.target = (InetSocketAddress) target;
        this.listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread.ofPlatform().daemon().name("relay accept").start(this::accept);
    }

    InetSocketAddress address() throws IOException {
        return (InetSocketAddress) listener.getLocalAddress();
    }

    /** Flips the byte {@code offset} bytes after those the dialler's stream forwarded so far. */
    void flipFromNow(final long offset) {
        flipAt = forwardedUp + offset;
    }

    /** Forwards {@code offset} more bytes of the dialler's stream, then closes the target's side. */
    void cutFromNow(final long offset) {
        cutAt = forwardedUp + offset;
    }

    private void accept() {
        try {
            final SocketChannel fromDialler = listener.accept();
            final SocketChannel toTarget = SocketChannel.open(target);
            down = fromDialler;
            up = toTarget;
            Thread.ofPlatform().daemon().name("relay up").start(() -> forward(fromDialler, toTarget, true));
            forward(toTarget, fromDialler, false);
        } catch (final IOException e) {
            // Nothing connects: the test fails on its deadline.
        }
    }

    private void forward(final SocketChannel from, final SocketChannel to, final boolean tampering) {
        final ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        try {
            while (from.read(buffer) >= 0) {
                buffer.flip();
                if (tampering) {
                    final long start = forwardedUp;
                    final long at = flipAt - start;
                    if (at >= 0 && at < buffer.remaining()) {
                        final int index = (int) at;
                        buffer.put(index, (byte) (buffer.get(index) ^ 0x01));
                    }
                    final long cut = cutAt - start;
                    if (cut >= 0 && cut < buffer.remaining()) {
                        buffer.limit((int) cut);
                        while (buffer.hasRemaining()) {
                            to.write(buffer);
                        }
                        forwardedUp = start + cut;
                        to.close();
                        return;
                    }
                    forwardedUp = start + buffer.remaining();
                }
                while (buffer.hasRemaining()) {
                    to.write(buffer);
                }
                buffer.clear();
            }
        } catch (final IOException e) {
            // The test closed a side.
        }
    }

    void close() throws IOException {
        listener.close();
        for (final SocketChannel channel : new SocketChannel[] {down, up}) {
            if (channel != null) {
                channel.close();
            }
        }
    }
}
