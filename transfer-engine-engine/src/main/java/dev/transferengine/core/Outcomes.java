package dev.transferengine.core;

import dev.transferengine.EngineCounter;
import dev.transferengine.ReadRequest;
import dev.transferengine.TransferListener;
import dev.transferengine.TransferRequest;
import dev.transferengine.exceptions.OperationCancelledException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.spi.Domain;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * How the operations in flight on one group end, each exactly once: a piece acknowledged or failed, pieces given up
 * before they were posted, a timeout or a cancellation (its posted pieces withdrawn from their NICs), or a failure
 * of everything in flight. The first failure is reported (and, for a request with an imm, told to its receivers by
 * {@link ImmAbandonments}); the slot, the send buffer and the submission are freed once every piece ended. Worker
 * thread only.
 */
final class Outcomes {

    private final InFlightTable inFlight;
    private final WorkerServices services;
    private final GroupNics nics;
    /** The group's NICs; the group reopens them in place. */
    private final Domain[] domains;

    private final ImmAbandonments abandonments;
    private final Duration operationTimeout;

    Outcomes(
            final InFlightTable inFlight,
            final WorkerServices services,
            final GroupNics nics,
            final Domain[] domains,
            final ImmAbandonments abandonments,
            final Duration operationTimeout) {
        this.inFlight = inFlight;
        this.services = services;
        this.nics = nics;
        this.domains = domains;
        this.abandonments = abandonments;
        this.operationTimeout = operationTimeout;
    }

    /**
     * {@code pieces} pieces of operation {@code token} ended, reported at once (a run of pages answered together),
     * failed with {@code error} if it is not null; a stale token (the operation ended already) is ignored.
     */
    void ack(final long token, final int pieces, final @Nullable TransferEngineException error) {
        final Submission s = inFlight.get(token);
        if (s == null) {
            return;
        }
        if (error != null) {
            fail(s, error);
        } else {
            s.confirmed += pieces;
        }
        s.remaining -= pieces;
        if (s.remaining == 0) {
            end(s);
        }
    }

    /** Gives up the pieces not posted yet; the request fails and ends once the posted ones drained. */
    void abandon(final Submission s, final int unposted, final TransferEngineException error) {
        fail(s, error);
        s.remaining -= unposted;
        if (s.remaining <= 0) {
            release(s);
        }
    }

    /** Every piece ended: reports success unless a piece failed (already reported), and frees the slot. */
    void end(final Submission s) {
        if (!s.failed) {
            s.complete(null, services.callbacks(), services.counters());
        }
        release(s);
    }

    /**
     * A request the worker never started fails (the engine closing): its receivers are told, as for one that failed
     * posted, since they wait for its imms all the same; then its send buffer is freed.
     */
    void failUnstarted(final Submission s, final TransferEngineException error) {
        if (nics.isOpen()) {
            abandonments.tell(s, error);
        }
        s.complete(error, services.callbacks(), services.counters());
        releaseSendBuffer(s);
    }

    /** Reports the request's first failure; later ones are dropped. */
    void fail(final Submission s, final TransferEngineException error) {
        if (!s.failed) {
            s.failed = true;
            if (nics.isOpen()) {
                abandonments.tell(s, error);
            }
            s.complete(error, services.callbacks(), services.counters());
        }
    }

    void release(final Submission s) {
        inFlight.remove(s.token);
        releaseSendBuffer(s);
        services.pool().recycle(s);
    }

    void releaseSendBuffer(final Submission s) {
        if (s.sendBuffer != null) {
            services.sendBuffers().release(s.sendBuffer);
        }
    }

    /** Fails the operations past their deadline at {@code now} and withdraws their pieces; how many expired. */
    int expire(final long now) {
        int expired = 0;
        for (Submission s = inFlight.nextExpired(0, now); s != null; ) {
            final long token = s.token;
            services.counters().increment(EngineCounter.REQUESTS_TIMED_OUT);
            fail(
                    s,
                    new TransferTimeoutException(describe(s) + " did not complete within " + operationTimeout + " ("
                            + s.remaining + " " + pieces(s) + " outstanding)"));
            withdraw(token);
            release(s);
            expired++;
            s = inFlight.nextExpired((int) token + 1, now);
        }
        return expired;
    }

    /**
     * Cancels the operation submitted with {@code listener} if it is in flight here: its queued pieces are withdrawn
     * as for a timeout and it ends as cancelled now; one still queued is caught when the group starts it.
     */
    void cancel(final TransferListener listener) {
        for (Submission s = inFlight.nextLive(0); s != null; s = inFlight.nextLive((int) s.token + 1)) {
            if (s.hasListener(listener)) {
                fail(
                        s,
                        new OperationCancelledException(describe(s) + " cancelled after it was posted (" + s.remaining
                                + " " + pieces(s) + " outstanding)"));
                withdraw(s.token);
                release(s);
                return;
            }
        }
    }

    /** Fails and frees every operation in flight. */
    void failAll(final TransferEngineException error) {
        for (Submission s = inFlight.nextLive(0); s != null; ) {
            final int slot = (int) s.token;
            fail(s, error);
            release(s);
            s = inFlight.nextLive(slot + 1);
        }
    }

    /** Asks each NIC that got a piece of {@code token} to drop what it still holds of it. */
    private void withdraw(final long token) {
        for (int posted = inFlight.postedNics(token); posted != 0; posted &= posted - 1) {
            domains[Integer.numberOfTrailingZeros(posted)].cancel(token);
        }
    }

    /** What the operation is, for a message: the request's type, or the send's peer. */
    static String describe(final Submission s) {
        return s.isSend() ? "send to " + s.sendPeer : describe(s.request);
    }

    /** What the operation's pieces are, for messages: a read's pieces are reads, not writes. */
    private static String pieces(final Submission s) {
        return s.isSend() ? "sends" : s.request instanceof ReadRequest ? "reads" : "writes";
    }

    private static String describe(final @Nullable TransferRequest request) {
        return request == null ? "request" : request.getClass().getSimpleName();
    }
}
