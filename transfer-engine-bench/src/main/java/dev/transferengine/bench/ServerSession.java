package dev.transferengine.bench;

import dev.transferengine.ImmCounter;
import dev.transferengine.ImmTrigger;
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
 * {@link Imms#PONG}. With {@code workerEcho} the engine's worker that counts a ping posts the pong itself (an
 * {@link ImmTrigger}, re-armed at each hello); otherwise a thread of its own polls the ping counter and submits each
 * pong, two hand-offs between cores per hop that the trigger saves (kept to compare the two).
 */
final class ServerSession implements AutoCloseable {

    private static final int HELLO_BUFFER = 4096;

    private final TransferEngine engine;
    private final MemoryRegion region;
    private final boolean workerEcho;
    private final TransferCounters replies = new TransferCounters();
    private final ReceivePool hellos;
    private final @Nullable Thread echo;
    /** Thread echo: where pongs go, null until a client said hello. */
    private volatile @Nullable ImmWrite pong;
    /** Worker echo: the trigger armed for the client that said hello last, null until one did. */
    private volatile @Nullable ImmTrigger trigger;

    private volatile boolean running = true;

    ServerSession(
            final TransferEngine engine, final MemoryRegion region, final IdleStrategy idle, final boolean workerEcho) {
        this.engine = engine;
        this.region = region;
        this.workerEcho = workerEcho;
        // data writes are counted by a polled counter, the cheapest receiver-side bookkeeping the engine offers
        engine.immCounter(Imms.DATA);
        if (workerEcho) {
            this.echo = null;
        } else {
            final ImmCounter pings = engine.immCounter(Imms.PING);
            this.echo = Thread.ofPlatform().name("te-bench-echo").daemon().start(() -> echoLoop(pings, idle));
        }
        this.hellos = engine.postedReceivePool(HELLO_BUFFER, 4, this::onHello);
    }

    /** On the callback thread: a client sent its descriptor; reply with ours and point the echo at it. */
    private void onHello(final MemorySegment message) {
        final RegionDescriptor client = RegionDescriptor.fromBytes(message.toArray(ValueLayout.JAVA_BYTE));
        final ImmWrite reply = ImmWrite.of(client, Imms.PONG);
        if (workerEcho) {
            trigger = engine.triggerOnImm(Imms.PING, 1, reply, replies); // replaces the last client's trigger
        } else {
            pong = reply;
        }
        engine.send(
                client.nic(0).address(),
                MemorySegment.ofArray(region.descriptor().toBytes()),
                new ErrorLoggingListener("hello reply"));
    }

    private void echoLoop(final ImmCounter pings, final IdleStrategy idle) {
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
        if (echo != null) {
            try {
                echo.join();
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        final ImmTrigger armed = trigger;
        if (armed != null) {
            armed.close();
        }
        hellos.close();
    }
}
