package dev.transferengine.bench;

import dev.transferengine.ImmCounter;
import dev.transferengine.ImmWrite;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.time.Duration;

import org.agrona.concurrent.IdleStrategy;
import org.jspecify.annotations.Nullable;

/**
 * Imm-only round trips, one at a time: write {@link Imms#PING} to the server, poll the {@link Imms#PONG} counter until
 * the server's echo arrives, record the time between. The ping's own completion only bumps a counter.
 */
final class ImmRoundTrip {

    private static final Duration REPLY_TIMEOUT = Duration.ofSeconds(10);

    private final TransferEngine engine;
    private final ImmWrite ping;
    private final ImmCounter pongs;
    private final IdleStrategy idle;
    private final @Nullable StageRecorder stages;

    /**
     * {@code pongs} must exist before the server learns where to reply, so that no pong is missed. With
     * {@code stages}, each round trip also waits for its ping's completion and records where its time went.
     */
    ImmRoundTrip(
            final TransferEngine engine,
            final RegionDescriptor server,
            final ImmCounter pongs,
            final IdleStrategy idle,
            final @Nullable StageRecorder stages) {
        this.engine = engine;
        this.ping = ImmWrite.of(server, Imms.PING);
        this.pongs = pongs;
        this.idle = idle;
        this.stages = stages;
    }

    /** Runs round trips until the interval is over. Blocks. */
    void run(final LatencyRecorder recorder) {
        final TransferCounters pings = new TransferCounters();
        long sent = 0;
        long start = System.nanoTime();
        while (!recorder.interval().isOver(start)) {
            engine.submit(ping, pings);
            sent++;
            awaitPong(start);
            final long end = System.nanoTime();
            recorder.done(start, end);
            if (stages != null) {
                awaitPing(pings, sent);
                stages.roundTrip(start, end);
                start = System.nanoTime();
            } else {
                start = end;
            }
        }
        pings.awaitCompleted(sent, REPLY_TIMEOUT);
        if (pings.failed() > 0) {
            throw new IllegalStateException(pings.failed() + " of " + sent + " pings failed");
        }
    }

    /** Waits until the ping's completion was seen by the worker (its stage timestamps are in). */
    private void awaitPing(final TransferCounters pings, final long sent) {
        idle.reset();
        while (pings.completed() < sent) {
            idle.idle();
        }
    }

    private void awaitPong(final long start) {
        idle.reset();
        while (pongs.balance() <= 0) {
            if (System.nanoTime() - start > REPLY_TIMEOUT.toNanos()) {
                throw new TransferTimeoutException(
                        "no pong within " + REPLY_TIMEOUT + "; is the peer a te-bench serve?");
            }
            idle.idle();
        }
        pongs.await(1);
    }
}
