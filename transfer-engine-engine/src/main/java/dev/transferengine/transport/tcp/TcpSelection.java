package dev.transferengine.transport.tcp;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.util.function.Consumer;
import java.util.function.ObjIntConsumer;
import javax.net.ssl.SSLException;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reading half of a {@link TcpDomain} poll step: which sockets are served and how. Either the selector is asked
 * ({@code selectNow}), or the plain inbound connection that last brought a request is read straight away, which
 * saves the {@code epoll_wait} a request/reply exchange would pay per request; then TLS connections holding
 * decrypted bytes and pipelined TLS connections are served. Readiness goes to the handshake, connection or listening
 * socket it concerns; a failure of one socket closes that socket only. Worker thread only.
 */
final class TcpSelection {

    private static final Logger LOG = LoggerFactory.getLogger(TcpSelection.class);
    /** At most this many polls in a row read the busy connection without a select. */
    private static final int SELECT_EVERY = 4;
    /** A poll this long after the one before selects: what came on any connection while the worker parked is found. */
    private static final long PAUSE_NANOS = 20_000L;
    /**
     * Reads of the busy connection that may find nothing before it is busy no more: a request/reply exchange keeps
     * it (a round trip is a few dozen polls), a connection that carried one early message and fell silent (the
     * descriptor a peer sent back) stops costing each poll a read that returns nothing.
     */
    private static final int BUSY_PATIENCE = 256;
    /** The ready set {@link #dispatch} gets for a read of the busy connection that no select reported. */
    private static final int READ_UNSELECTED = 0;

    private final TcpIo io;
    private final TcpAcceptor acceptor;
    private final TcpSettings settings;
    private final TcpCounters counters;
    /** Told when the selector or the listening socket failed: the domain fails. */
    private final Consumer<String> domainFailed;

    private final String description;
    private final Consumer<SelectionKey> onSelected = this::onSelected;
    private final Consumer<SelectionKey> onReadAgain = this::onReadAgain;
    private final ObjIntConsumer<SelectionKey> onPipelined = this::onPipelined;
    private int selectedWork;
    /**
     * The plain inbound connection that last brought a request: polls back to back read it straight away and select
     * only every {@value #SELECT_EVERY}th time, so a request on it costs one syscall (the read) rather than two (the
     * select that reports it, then the read), and an idle poll one either way. Null until one brought a request.
     */
    private @Nullable TcpInbound busy;
    /** Polls since the last select. */
    private int unselected;
    /** Reads of the busy connection in a row that found nothing; at {@value #BUSY_PATIENCE} it is busy no more. */
    private int idleReads;

    private long now;

    TcpSelection(
            final TcpIo io,
            final TcpAcceptor acceptor,
            final TcpSettings settings,
            final TcpCounters counters,
            final Consumer<String> domainFailed,
            final String description) {
        this.io = io;
        this.acceptor = acceptor;
        this.settings = settings;
        this.counters = counters;
        this.domainFailed = domainFailed;
        this.description = description;
    }

    /**
     * Serves what is readable (and writable, connectable, acceptable) at {@code nowNanos}, the poll before having run
     * at {@code previousNanos}; returns the work done.
     */
    int step(final long nowNanos, final long previousNanos) {
        now = nowNanos;
        selectedWork = 0;
        final TcpInbound direct = busy;
        if (direct != null
                && nowNanos - previousNanos < PAUSE_NANOS
                && ++unselected < SELECT_EVERY
                && direct.readsUnselected()) {
            dispatch(direct.key, READ_UNSELECTED);
            if (selectedWork > 0) {
                idleReads = 0;
            } else if (++idleReads >= BUSY_PATIENCE) {
                busy = null;
                idleReads = 0;
            }
        } else {
            unselected = 0;
            try {
                io.selector().selectNow(onSelected);
            } catch (final IOException e) {
                domainFailed.accept("selector failed: " + e);
            }
        }
        io.readAgain(onReadAgain);
        io.pollPipelined(onPipelined);
        return selectedWork;
    }

    private void onSelected(final SelectionKey key) {
        if (key.isValid()) {
            dispatch(key, key.readyOps());
        }
    }

    private void onPipelined(final SelectionKey key, final int readyOps) {
        if (key.isValid()) {
            dispatch(key, readyOps);
        }
    }

    private void onReadAgain(final SelectionKey key) {
        dispatch(key, SelectionKey.OP_READ);
    }

    private void dispatch(final SelectionKey key, final int readyOps) {
        if (key.attachment() instanceof TcpHandshake handshake) {
            try {
                selectedWork += handshake.onReady(readyOps);
            } catch (final SSLException e) {
                handshake.fail(TcpCounter.HANDSHAKE_TLS, "TLS failed: " + e.getMessage());
                selectedWork++;
            } catch (final IOException e) {
                handshake.fail(TcpCounter.HANDSHAKE_CLOSED, e.toString());
                selectedWork++;
            } catch (final Error e) {
                // Policy (issue 16, item 2): an Error while serving one socket (an OutOfMemoryError from a flood of
                // TLS handshakes, a StackOverflowError in a provider) closes that socket, which frees what it held,
                // and the worker carries on; left to Agrona's AgentRunner, which rethrows Errors, it would end the
                // worker and every peer's writes with it.
                handshake.fail(TcpCounter.ERROR_CLOSED, "while handshaking: " + e);
                selectedWork++;
            }
        } else if (key.attachment() instanceof TcpConnection connection) {
            try {
                final int work = readyOps == READ_UNSELECTED ? connection.onReadable() : connection.onReady(readyOps);
                selectedWork += work;
                if (work > 0 && connection instanceof TcpInbound inbound && inbound.tls == null && busy != inbound) {
                    busy = inbound;
                    idleReads = 0;
                }
            } catch (final IOException e) {
                io.lost(connection, e);
                selectedWork++;
            } catch (final RuntimeException e) {
                LOG.warn("{}: closing a connection after an unexpected error", description, e);
                connection.lost("internal error: " + e, e);
                selectedWork++;
            } catch (final Error e) { // the policy above: this connection closes, the worker carries on
                counters.count(TcpCounter.ERROR_CLOSED, TcpIo.describeRemote(connection.channel), e.toString());
                connection.lost("internal error: " + e, e);
                selectedWork++;
            }
        } else {
            try {
                selectedWork += acceptor.accept(now + settings.handshakeTimeoutNanos());
            } catch (final IOException e) {
                domainFailed.accept("listening socket closed: " + e);
            }
        }
    }
}
