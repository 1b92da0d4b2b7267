package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.TransportTls;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.ObjIntConsumer;
import javax.net.ssl.SSLException;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every socket of one NIC shares: the selector, the buffer pool, this side's identity for handshakes (cluster
 * keys, incarnation, address), TLS, the counters, and the per-step work lists: connections to flush, TLS
 * connections to read again, closed connections whose buffers go back to the pool once the step is over. The
 * domain's poll step drives the lists ({@link #flushScheduled}, {@link #readAgain(Consumer)},
 * {@link #releaseClosed}). Worker thread only, apart from the counters.
 */
final class TcpIo {

    private static final Logger LOG = LoggerFactory.getLogger(TcpIo.class);

    private final Selector selector;
    private final TcpBuffers buffers;
    private final TcpAuthenticator authenticator;
    private final TcpCounters counters;
    private final @Nullable TransportTls tls;
    /** Whether TLS connections offer engine records ({@link TcpRecords}; {@code tcp.tlsRecords}). */
    private final boolean engineRecords;

    private final long incarnation;
    private final byte[] addressBytes;
    private final String description;
    /** Our connections with requests to send: flushed first, so a request posted in reply leaves before answers. */
    private final ArrayList<TcpConnection> toFlush = new ArrayList<>();
    /** Connections peers opened, with answers to send: an answer only completes the peer's request. */
    private final ArrayList<TcpConnection> answersToFlush = new ArrayList<>();
    /** Closed connections whose buffers go back to the pool after the poll step: nothing touches them then. */
    private final ArrayList<TcpConnection> closedConnections = new ArrayList<>();
    /** Keys whose TLS holds decrypted bytes after their readiness was handled: read again this poll step. */
    private ArrayList<SelectionKey> readAgain = new ArrayList<>();

    private ArrayList<SelectionKey> readingAgain = new ArrayList<>();

    /** TLS connections whose socket has its own thread: asked every poll step, as the selector does not see them. */
    private final ArrayList<TcpConnection> pipelined = new ArrayList<>();

    /** Answers of connections peers opened with an ACK held for a reverse ride ({@link TcpFrame#REVERSE_ACK}). */
    private final ArrayList<TcpAnswers> acksHeld = new ArrayList<>();
    /** How long such an ACK may wait for a request to the peer; 0: reverse ACKs are off, both ways. */
    private final long reverseAckNanos;
    /** Whether this side announces {@link TcpFrame#FEATURE_PAGE_TABLE}. */
    private final boolean pageTables;
    /** Whether this side announces {@link TcpFrame#FEATURE_READ_FAILED}. */
    private final boolean readFailures;
    /** The poll clock at the start of the current poll step. */
    private long now;

    /** The parts of this side's identity travel together: they are fixed for the NIC's life. */
    record Identity(TcpAuthenticator authenticator, long incarnation, NetworkAddress address, String description) {

        /** A new NIC's identity, with a random, non-zero id of its life, so peers tell a restarted one apart. */
        Identity(final TcpAuthenticator authenticator, final NetworkAddress address, final String description) {
            this(authenticator, newIncarnation(), address, description);
        }

        private static long newIncarnation() {
            final long id = new SecureRandom().nextLong();
            return id == 0 ? 1 : id;
        }
    }

    TcpIo(
            final Selector selector,
            final TcpBuffers buffers,
            final Identity identity,
            final TcpCounters counters,
            final @Nullable TransportTls tls,
            final TcpSettings settings) {
        this.selector = selector;
        this.reverseAckNanos = settings.reverseAckNanos();
        this.pageTables = settings.pageTables();
        this.readFailures = settings.readFailures();
        this.buffers = buffers;
        this.authenticator = identity.authenticator();
        this.incarnation = identity.incarnation();
        this.addressBytes = identity.address().toBytes();
        this.description = identity.description();
        this.counters = counters;
        this.tls = tls;
        this.engineRecords = settings.tlsEngineRecords();
    }

    /** The selector every socket of the NIC registers with. */
    Selector selector() {
        return selector;
    }

    /** Pooled read and write buffers, taken after the handshake and given back on close. */
    TcpBuffers buffers() {
        return buffers;
    }

    /** The proofs of the handshake. */
    TcpAuthenticator authenticator() {
        return authenticator;
    }

    /** This side's random incarnation id, sent in its HELLO and CHALLENGE. */
    long incarnation() {
        return incarnation;
    }

    /** This side's encoded address, sent in its HELLO and CHALLENGE. */
    byte[] addressBytes() {
        return addressBytes;
    }

    /** The NIC, for logs and thread names. */
    String description() {
        return description;
    }

    /** The features this side announces in its HELLO and CHALLENGE ({@link TcpFrame}). */
    int features() {
        return (reverseAckNanos > 0 ? TcpFrame.FEATURE_REVERSE_ACK : 0)
                | (pageTables ? TcpFrame.FEATURE_PAGE_TABLE : 0)
                | (readFailures ? TcpFrame.FEATURE_READ_FAILED : 0);
    }

    /** How recently this side must have posted to a peer for ACKs to wait for a ride to it ({@link TcpAnswers}). */
    long recentRequestNanos() {
        return reverseAckNanos * TcpAnswers.RECENT_REQUEST_BOUNDS;
    }

    /** The poll clock at the start of the current poll step. */
    long now() {
        return now;
    }

    /**
     * Starts a poll step at {@code nowNanos}: the ACKs held longer than {@code tcp.reverseAckMicros} leave on their
     * own connections (flushed by {@link #flushScheduled} next). Returns the ACKs sent so.
     */
    int startStep(final long nowNanos) {
        now = nowNanos;
        int sent = 0;
        for (int i = acksHeld.size() - 1; i >= 0; i--) {
            final TcpAnswers answers = acksHeld.get(i);
            if (nowNanos - answers.heldSince() >= reverseAckNanos) {
                removeHeld(i);
                answers.sendHeldAck();
                sent++;
            }
        }
        return sent;
    }

    /** {@code answers} began to hold an ACK for a reverse ride. */
    void holdAck(final TcpAnswers answers) {
        acksHeld.add(answers);
    }

    /** {@code answers} no longer holds an ACK: it left, or its connection closed. */
    void releaseAck(final TcpAnswers answers) {
        final int at = acksHeld.indexOf(answers);
        if (at >= 0) {
            removeHeld(at);
        }
    }

    /**
     * Encodes into {@code outbound}'s write buffer, as REVERSE_ACK frames, the ACKs held for requests that its peer
     * sent on its own connection to this NIC, as far as the buffer has room: they leave with the requests encoded
     * after them, in one write.
     */
    void carryAcks(final TcpOutbound outbound) {
        for (int i = acksHeld.size() - 1; i >= 0; i--) {
            final TcpAnswers answers = acksHeld.get(i);
            if (answers.ridesOn(outbound)) {
                if (outbound.out.capacity() - outbound.encoded < TcpFrame.HEADER_LENGTH) {
                    return;
                }
                removeHeld(i);
                outbound.encoded += answers.encodeReverse(outbound.outFrame.at(outbound.encoded));
            }
        }
    }

    private void removeHeld(final int at) {
        acksHeld.set(at, acksHeld.getLast());
        acksHeld.removeLast();
    }

    /** {@code connection}'s TLS socket got its own thread: {@link #pollPipelined} reports its readiness. */
    void pipelined(final TcpConnection connection) {
        pipelined.add(connection);
    }

    /**
     * Dispatches the pipelined TLS connections that have records to decrypt or room to encrypt into, and fails
     * those whose socket thread failed; forgets closed ones. Once per poll step.
     */
    void pollPipelined(final ObjIntConsumer<SelectionKey> dispatch) {
        for (int i = pipelined.size() - 1; i >= 0; i--) {
            final TcpConnection connection = pipelined.get(i);
            if (connection.closed()) {
                pipelined.set(i, pipelined.getLast());
                pipelined.removeLast();
                continue;
            }
            final TcpTls wire = Objects.requireNonNull(connection.tls);
            final Throwable failure = wire.pipeFailure();
            if (failure != null) {
                connection.lost("TLS socket failed: " + failure, failure);
                continue;
            }
            final int ops = connection.pipelinedOps();
            if (ops != 0) {
                dispatch.accept(connection.key, ops);
            }
        }
    }

    /** Counts a refused connection or request, and logs it rate limited. */
    void count(final TcpCounter counter, final String remote, final String what) {
        counters.count(counter, remote, what);
    }

    /** Counts one event without logging it (the caller logs). */
    void count(final TcpCounter counter) {
        counters.count(counter);
    }

    /**
     * TLS for a new socket to {@code peer} (null: this side accepts), or null when the NIC runs without TLS.
     *
     * @throws SSLException if the TLS engine cannot start
     */
    @Nullable TcpTls tls(final SocketChannel channel, final @Nullable InetSocketAddress peer) throws SSLException {
        final TransportTls config = tls;
        if (config == null) {
            return null;
        }
        return new TcpTls(channel, TcpTlsEngines.create(config, peer, engineRecords));
    }

    /** Whether the NIC speaks TLS. */
    boolean hasTls() {
        return tls != null;
    }

    /** Flushes {@code connection} at the next flush step (the start of the next poll at the latest). */
    void scheduleFlush(final TcpConnection connection) {
        (connection instanceof TcpInbound ? answersToFlush : toFlush).add(connection);
    }

    /** Dispatches {@code key} as readable again in this poll step: TLS holds bytes the selector cannot see. */
    void readAgain(final SelectionKey key) {
        readAgain.add(key);
    }

    /** A closed connection's buffers may be reused once the current poll step is over. */
    void onClosed(final TcpConnection connection) {
        closedConnections.add(connection);
    }

    /** True while flushed output is still scheduled: the worker should poll again without idling. */
    boolean flushPending() {
        return !toFlush.isEmpty() || !answersToFlush.isEmpty();
    }

    /**
     * Flushes the connections scheduled since the last flush step, requests before answers: on the path of a
     * request/reply exchange (an imm answered by an imm) the reply is what the peer waits for, the answer to its
     * request only completes it. A connection that fails is lost.
     */
    int flushScheduled() {
        return flush(toFlush) + flush(answersToFlush);
    }

    private int flush(final List<TcpConnection> scheduled) {
        int work = 0;
        // Flushing can schedule more (an inbound connection resumes reading and answers), so re-read the size.
        for (int i = 0; i < scheduled.size(); i++) {
            final TcpConnection connection = scheduled.get(i);
            try {
                work += connection.flush();
            } catch (final SSLException e) {
                lost(connection, e);
            } catch (final IOException e) {
                connection.lost("write failed: " + e.getMessage(), e);
            } catch (final RuntimeException e) {
                LOG.warn("{}: closing a connection after an unexpected error", description, e);
                connection.lost("internal error: " + e, e);
            } catch (final Error e) { // the policy in TcpDomain.dispatch: this connection closes, the worker carries on
                counters.count(TcpCounter.ERROR_CLOSED, describeRemote(connection.channel), e.toString());
                connection.lost("internal error: " + e, e);
            }
        }
        scheduled.clear();
        return work;
    }

    /** Reads again, once per step, the TLS connections that hold decrypted bytes (each may ask again next step). */
    void readAgain(final Consumer<SelectionKey> dispatchReadable) {
        if (readAgain.isEmpty()) {
            return;
        }
        final ArrayList<SelectionKey> keys = readAgain;
        readAgain = readingAgain;
        readingAgain = keys;
        for (int i = 0; i < keys.size(); i++) {
            final SelectionKey key = keys.get(i);
            if (key.isValid()) {
                dispatchReadable.accept(key);
            }
        }
        keys.clear();
    }

    /** Gives the buffers of the connections closed during the step back to the pool. */
    void releaseClosed() {
        for (int i = 0; i < closedConnections.size(); i++) {
            closedConnections.get(i).releaseBuffers();
        }
        closedConnections.clear();
    }

    /** The NIC closes: nothing is flushed or released any more. */
    void clear() {
        toFlush.clear();
        answersToFlush.clear();
        closedConnections.clear();
        readAgain.clear();
        pipelined.clear();
        acksHeld.clear();
    }

    /** A connection's socket or TLS failed: TLS failures are counted, as they end handshakes mostly. */
    void lost(final TcpConnection connection, final IOException e) {
        final String message = e.getMessage() == null ? e.toString() : e.getMessage();
        if (e instanceof SSLException) {
            counters.count(TcpCounter.HANDSHAKE_TLS, describeRemote(connection.channel), message);
            connection.lost("TLS failed: " + message, e);
        } else {
            connection.lost(message, e);
        }
    }

    static String describeRemote(final SocketChannel channel) {
        try {
            return String.valueOf(channel.getRemoteAddress());
        } catch (final IOException e) {
            return "a closed socket";
        }
    }
}
