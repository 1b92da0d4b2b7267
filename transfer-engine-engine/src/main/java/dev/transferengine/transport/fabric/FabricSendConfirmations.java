package dev.transferengine.transport.fabric;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;
import org.jspecify.annotations.Nullable;

/**
 * What a closing RxM domain confirms before its endpoint closes (issue 21): that each peer it reported sends done to
 * has read them. tcp;ofi_rxm reports an eager send done once its bytes are in the kernel's socket buffer; where the
 * receiver has not read them yet (it stopped reading: a pause, a stopped process) and the sender's socket holds
 * bytes the sender has not read (the receiver sent something), closing the socket makes the kernel reset the
 * connection and drop what it had not transmitted, sends reported done among them.
 *
 * <p>So the close asks each such peer a question on the connection the sends went on, behind them: a pool-size
 * question ({@code "TEPQ"}, {@link FabricControl#poolQuery}) with a nonce of the close's own, which every engine
 * with pool sizes answers ({@code "TEPS"}) echoing the nonce. The peer's provider reads a connection's bytes in
 * order, so the answer means it read every send before the question, and an eager message outlives its connection
 * in the receiver's provider. Meanwhile the domain polls, which reads what peers send it, so that its socket holds
 * nothing unread. A question goes again after 2, 4, 8, ... ms (at most 512 ms apart: a connection that broke may
 * have lost it); a peer whose question failed {@value #FAILURES} times, or that the provider cannot connect to
 * (its process closed or died: nothing reaches it any more), or that never told its pool sizes (an engine before
 * them) is given up; the close waits for the others until its timeout ({@code fabric.closeTimeoutMillis}) and names
 * what stays unconfirmed. Single-threaded (the worker).
 */
final class FabricSendConfirmations {

    /** Failed questions to one peer before the close gives up on it. */
    static final int FAILURES = 3;
    /**
     * How long the provider may turn a question away (-FI_EAGAIN: RxM makes a connection first) before the close gives
     * up on its peer: RxM connects to a running peer within a few of its 1 ms connection-event rounds, and tries a
     * closed or dead one's address again and again.
     */
    static final long UNCONNECTED_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    /** The longest wait before a question goes again: {@link FabricControl#retryDelayNanos} of this attempt. */
    private static final int LONGEST_WAIT_ATTEMPT = 9;

    /** Sends reported done to each peer (handle) since the domain opened. */
    private final Long2LongHashMap done = new Long2LongHashMap(0);
    /** The peers a close asks and has not heard from, by handle. */
    private final Long2ObjectHashMap<Asked> asking = new Long2ObjectHashMap<>();
    /** Each question in flight's peer, by its control token. */
    private final Long2LongHashMap questions = new Long2LongHashMap(-1);
    /** The nonces of the peers that answered: an answer to a question asked again is dropped quietly. */
    private final LongHashSet answeredNonces = new LongHashSet();
    /** What a close gave up on: a peer and why, as text. */
    private final List<String> givenUp = new ArrayList<>();

    /** One peer a close asks. */
    private static final class Asked {
        final long nonce = ThreadLocalRandom.current().nextLong();
        final long sends;
        int attempts;
        int failures;
        long dueAt;
        /** Whether a question is posted and its send has not ended: the next waits for it. */
        boolean inFlight;
        /** Since when the provider turns its question away, or 0. */
        long turnedAwaySince;

        @Nullable String lastFailure;

        Asked(final long sends, final long dueAt) {
            this.sends = sends;
            this.dueAt = dueAt;
        }
    }

    /** A send to {@code peer} was reported done. */
    void sendDone(final long peer) {
        done.put(peer, done.get(peer) + 1);
    }

    /**
     * The close begins at {@code now}: every peer sends were reported done to is asked, except those for which
     * {@code unaskable} gives a reason (given up at once; {@code names} names them).
     */
    void begin(
            final long now,
            final LongFunction<@Nullable String> unaskable,
            final LongFunction<@Nullable Object> names) {
        done.forEach((peer, sends) -> {
            final String why = unaskable.apply(peer);
            if (why == null) {
                asking.put(peer, new Asked(sends, now));
            } else {
                givenUp.add(describe(names.apply(peer), sends, why));
            }
        });
    }

    /** Whether some peer asked has not answered, and was not given up. */
    boolean waiting() {
        return !asking.isEmpty();
    }

    /**
     * A peer whose question is due at {@code now}, or -1; the caller asks it ({@link #asked}). A question whose send
     * has not ended (its connection being made, or the provider turning it away) is not asked again meanwhile.
     */
    long due(final long now) {
        for (final var entry : asking.entrySet()) {
            final Asked asked = entry.getValue();
            if (!asked.inFlight && now - asked.dueAt >= 0) {
                return entry.getKey();
            }
        }
        return -1;
    }

    /** The nonce the close asks {@code peer} with. */
    long nonce(final long peer) {
        final Asked asked = asking.get(peer);
        return asked == null ? 0 : asked.nonce;
    }

    /**
     * {@code peer} was asked at {@code now} by the control send {@code token} (-1 where no send could be made: it is
     * asked again at the next wait's end).
     */
    void asked(final long peer, final long token, final long now) {
        final Asked asked = asking.get(peer);
        if (asked == null) {
            return;
        }
        asked.dueAt = now + FabricControl.retryDelayNanos(Math.min(asked.attempts, LONGEST_WAIT_ATTEMPT));
        asked.attempts++;
        if (token >= 0) {
            asked.inFlight = true;
            questions.put(token, peer);
        }
    }

    /** Control send {@code token} ended (done or failed); a question's failure is counted, with its text. */
    void questionEnded(final long token, final @Nullable String failure, final LongFunction<@Nullable Object> names) {
        final long peer = questions.remove(token);
        final Asked asked = peer == -1 ? null : asking.get(peer);
        if (asked == null) {
            return;
        }
        asked.inFlight = false;
        asked.turnedAwaySince = 0;
        if (failure == null) {
            return;
        }
        asked.lastFailure = failure;
        if (++asked.failures >= FAILURES) {
            asking.remove(peer);
            givenUp.add(describe(
                    names.apply(peer),
                    asked.sends,
                    "the question whether it read them failed " + FAILURES + " times, last: " + failure));
        }
    }

    /**
     * The provider turns the question {@code token} away at {@code now} (it waits among the posts to make again); a
     * peer whose question was turned away for {@link #UNCONNECTED_NANOS} is given up: no connection to it can be made
     * (it closed or died), so nothing it had not read can reach it any more.
     */
    void turnedAway(final long token, final long now, final LongFunction<@Nullable Object> names) {
        final long peer = questions.get(token);
        final Asked asked = peer == -1 ? null : asking.get(peer);
        if (asked == null) {
            return;
        }
        if (asked.turnedAwaySince == 0) {
            asked.turnedAwaySince = now;
        } else if (now - asked.turnedAwaySince >= UNCONNECTED_NANOS) {
            asking.remove(peer);
            givenUp.add(describe(
                    names.apply(peer),
                    asked.sends,
                    "the provider could not connect to it for " + TimeUnit.NANOSECONDS.toMillis(UNCONNECTED_NANOS)
                            + " ms (it closed or died)"));
        }
    }

    /**
     * Whether pool sizes from {@code peer} with {@code nonce} answer a question of the close: the peer is confirmed
     * (or was, and this answers a question asked again).
     */
    boolean answered(final long peer, final long nonce) {
        final Asked asked = asking.get(peer);
        if (asked == null || asked.nonce != nonce) {
            return answeredNonces.contains(nonce);
        }
        asking.remove(peer);
        answeredNonces.add(nonce);
        return true;
    }

    /**
     * What the close leaves unconfirmed, once its wait ended (or it gave up): each peer given up and each that did
     * not answer, with how many sends and why.
     */
    List<String> unconfirmed(final LongFunction<@Nullable Object> names) {
        final List<String> left = new ArrayList<>(givenUp);
        asking.forEach((peer, asked) -> left.add(describe(names.apply(peer), asked.sends, unanswered(asked))));
        return left;
    }

    private static String unanswered(final Asked asked) {
        final String questions = "no answer to " + asked.attempts + " questions whether it read them";
        return asked.lastFailure == null ? questions : questions + " (last failure: " + asked.lastFailure + ")";
    }

    private static String describe(final @Nullable Object peer, final long sends, final String why) {
        return peer + ": " + sends + " sends reported done since the domain opened, not confirmed read: " + why;
    }
}
