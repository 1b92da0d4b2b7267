package dev.transferengine.bench;

import dev.transferengine.ImmCounter;
import dev.transferengine.ImmWrite;
import dev.transferengine.MemoryRegion;
import dev.transferengine.ReceivePool;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.agrona.concurrent.IdleStrategy;
import org.jspecify.annotations.Nullable;

/**
 * What {@code te-bench serve} does for its clients: answers each client's hello (its region descriptor) with the
 * server's region descriptor, and echoes every {@link Imms#PING} back to the client that said hello last as a
 * {@link Imms#PONG}, on a thread of its own that polls the ping counter.
 */
final class ServerSession implements AutoCloseable {

    private static final int HELLO_BUFFER = 4096;

    private final TransferEngine engine;
    private final MemoryRegion region;
    private final ImmCounter pings;
    private final IdleStrategy idle;
    private final TransferCounters replies = new TransferCounters();
    private final ReceivePool hellos;
    private final Thread echo;
    /** Where pongs go: null until a client said hello. */
    private volatile @Nullable ImmWrite pong;

    private volatile boolean running = true;

    ServerSession(final TransferEngine engine, final MemoryRegion region, final IdleStrategy idle) {
        this.engine = engine;
        this.region = region;
        this.idle = idle;
        this.pings = engine.immCounter(Imms.PING);
        // data writes are counted by a polled counter, the cheapest receiver-side bookkeeping the engine offers
        engine.immCounter(Imms.DATA);
        this.hellos = engine.postedReceivePool(HELLO_BUFFER, 4, this::onHello);
        this.echo = Thread.ofPlatform().name("te-bench-echo").daemon().start(this::echoLoop);
    }

    /** On the callback thread: a client sent its descriptor; reply with ours and point the echo at it. */
    private void onHello(final MemorySegment message) {
        final RegionDescriptor client = RegionDescriptor.fromBytes(message.toArray(ValueLayout.JAVA_BYTE));
        pong = ImmWrite.of(client, Imms.PONG);
        engine.send(
                client.nic(0).address(),
                MemorySegment.ofArray(region.descriptor().toBytes()),
                new ErrorLoggingListener("hello reply"));
    }

    private void echoLoop() {
        while (running) {
            final ImmWrite reply = pong;
            if (reply != null && pings.balance() > 0) {
                pings.await(1);
                engine.submit(reply, replies);
                idle.reset();
            } else {
                idle.idle();
            }
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            echo.join();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        hellos.close();
    }
}
