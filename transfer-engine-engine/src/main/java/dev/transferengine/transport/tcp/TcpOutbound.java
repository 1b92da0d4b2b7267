package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.MalformedDescriptorException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;

import org.jspecify.annotations.Nullable;

/**
 * The connection a domain opened to one peer for its own requests: it sends HELLO, then WRITE, WRITE_IMM, IMM,
 * SEND, ABANDON, READ, READ_DATA and READ_FAILED frames, and reads the peer's HELLO and the ACK or NACK for each
 * request, which arrive in request order. Requests posted while connecting wait in a queue. Losing the connection fails every request still
 * queued or awaiting its answer. Worker thread only.
 */
final class TcpOutbound extends TcpConnection {

    /** Payloads up to this size are copied next to their header; larger ones are written from the source. */
    private static final int INLINE_PAYLOAD = 16 * 1024;

    private final TcpRequests requests;
    private final TcpPeer peer;
    private final ArrayDeque<TcpOp> queued = new ArrayDeque<>();
    private final ArrayDeque<TcpOp> awaiting = new ArrayDeque<>();
    private final long handshakeDeadlineNanos;
    private final byte[] nonce;
    /** Names this connection in the REVERSE_ACK frames that answer its requests on the peer's connection to us. */
    private final long connectionId;
    /** Both sides announced {@link TcpFrame#FEATURE_REVERSE_ACK}: answers may come on the peer's connection too. */
    private boolean reverseAcks;
    /** Both sides announced {@link TcpFrame#FEATURE_PAGE_TABLE}: pages go as PAGES frames, a NACK may refuse several. */
    private boolean pageTables;
    /** Both sides announced {@link TcpFrame#FEATURE_READ_FAILED}: a served read stopped part-way is told to the reader. */
    private boolean readFailures;

    private final TcpPageFrames pageFrames = new TcpPageFrames();
    /**
     * Answers that came before those of earlier requests, in request order: a REVERSE_ACK may overtake the answers on
     * this connection, and they it. Each is applied once the requests before it were answered.
     */
    private final ArrayList<Early> early = new ArrayList<>();

    private boolean connected;
    private boolean authenticated;
    private long remoteIncarnation;
    private long nextId = 1;
    /** Requests (runs of pieces with one token) queued or awaiting answers: what tcp.maxQueuedPerPeer bounds. */
    private int openRequests;
    /** The token of the request enqueued last: its further pieces continue it and are never refused. */
    private long lastToken;
    /** Acknowledged pieces of one token not reported yet: see {@link #joinRun}. */
    private long runToken;

    private int runPieces;
    private long runBytes;

    private TcpOutbound(
            final TcpIo io,
            final TcpRequests requests,
            final TcpPeer peer,
            final SocketChannel channel,
            final @Nullable TcpTls tls,
            final boolean connected,
            final long handshakeDeadlineNanos)
            throws IOException {
        super(
                io,
                channel,
                tls,
                connected ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT,
                TcpBuffers.LARGE,
                TcpBuffers.SMALL);
        this.requests = requests;
        this.peer = peer;
        this.connected = connected;
        this.handshakeDeadlineNanos = handshakeDeadlineNanos;
        this.nonce = io.authenticator().newNonce();
        this.connectionId = TcpFrame.connectionId(nonce);
        final byte[] self = io.addressBytes();
        outFrame.at(0).encode(TcpFrame.HELLO, 0, io.features(), io.incarnation(), 0, 0, nonce.length + self.length);
        out.put(TcpFrame.HEADER_LENGTH, nonce).put(TcpFrame.HEADER_LENGTH + nonce.length, self);
        encoded = TcpFrame.HEADER_LENGTH + nonce.length + self.length;
    }

    /**
     * Starts a non-blocking connect to {@code peer} with sockets of {@code bufferBytes} (0: the kernel's choice);
     * connect and handshake must finish by {@code deadlineNanos}.
     *
     * @throws IOException if the socket cannot be opened or the connect is refused at once
     */
    static TcpOutbound connect(
            final TcpIo io,
            final TcpRequests requests,
            final TcpPeer peer,
            final int bufferBytes,
            final long deadlineNanos)
            throws IOException {
        final SocketChannel channel = SocketChannel.open();
        try {
            configure(channel, bufferBytes);
            final @Nullable TcpTls tls = io.tls(channel, peer.socketAddress());
            final boolean connected = channel.connect(peer.socketAddress());
            final TcpOutbound outbound = new TcpOutbound(io, requests, peer, channel, tls, connected, deadlineNanos);
            if (connected) {
                requests.onConnected(peer);
            }
            return outbound;
        } catch (final IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    TcpPeer peer() {
        return peer;
    }

    /** The incarnation the peer proved on this connection, or 0 before its CHALLENGE. */
    long remoteIncarnation() {
        return remoteIncarnation;
    }

    /** The id REVERSE_ACK frames name this connection by ({@link TcpFrame#connectionId}). */
    long connectionId() {
        return connectionId;
    }

    /** True if held ACKs for the peer's requests may ride on this connection: authenticated, open, both agreed. */
    boolean carriesReverseAcks() {
        return reverseAcks && !closed();
    }

    boolean connecting() {
        return !connected && !closed();
    }

    /** Pieces queued or awaiting their answer. */
    int outstanding() {
        return queued.size() + awaiting.size();
    }

    /** Whether frames wait to be written: queued (also while connecting) or encoded and not yet sent. */
    boolean unsent() {
        return !closed() && (!queued.isEmpty() || unwritten());
    }

    /** Requests queued or awaiting their answer: runs of pieces with one token; what tcp.maxQueuedPerPeer bounds. */
    int requests() {
        return openRequests;
    }

    /**
     * True if {@code token} is the request enqueued last and still outstanding: its pieces are posted in one go, so
     * accepting its first piece accepted them all (back-pressure belongs at submission, never mid-request).
     */
    boolean continues(final long token) {
        return openRequests > 0 && token == lastToken;
    }

    /**
     * Closes the connection if connect and handshake did not finish by their deadline, if requests await answers
     * and no byte came for the frame timeout (the peer froze or the path broke), or if it carried nothing for the
     * idle timeout; returns 1 if it did.
     */
    @Override
    int expire(final long nowNanos, final TcpSettings settings) {
        if (!authenticated) {
            if (nowNanos - handshakeDeadlineNanos >= 0) {
                lost(
                        (connected ? "handshake" : "connect") + " did not finish within "
                                + settings.handshakeTimeoutNanos() / 1_000_000 + " ms",
                        null);
                return 1;
            }
            return 0;
        }
        final long quiet = quietNanos(nowNanos);
        if (!awaiting.isEmpty() || !queued.isEmpty()) {
            if (quiet < settings.frameTimeoutNanos()) {
                return 0;
            }
            io.count(
                    TcpCounter.FRAME_TIMEOUT,
                    peer.toString(),
                    outstanding() + " requests got no answer for " + quiet / 1_000_000 + " ms");
            lost("no answer for " + quiet / 1_000_000 + " ms", null);
            return 1;
        }
        if (settings.idleTimeoutNanos() > 0 && quiet >= settings.idleTimeoutNanos()) {
            io.count(TcpCounter.IDLE_CLOSED, peer.toString(), "idle for " + quiet / 1_000_000 + " ms");
            closeChannel();
            requests.onOutboundIdle(this);
            return 1;
        }
        return 0;
    }

    /** Queues a request; it leaves with the next flush once the handshake is done. */
    void enqueue(final TcpOp op) {
        if (!continues(op.token)) {
            openRequests++;
            lastToken = op.token;
        }
        op.id = nextId;
        nextId += op.pages;
        queued.addLast(op);
        markDirty();
    }

    /** Drops the requests with {@code token} that are still queued, so none of their bytes leaves; staged pieces stay. */
    void withdraw(final long token) {
        final Iterator<TcpOp> it = queued.iterator();
        while (it.hasNext()) {
            final TcpOp op = it.next();
            if (op.token == token && op.chunk == null) {
                it.remove();
                requests.release(op);
            }
        }
        countRequests();
    }

    /** Recounts the runs of one token among the outstanding pieces, after pieces were withdrawn. */
    private void countRequests() {
        int runs = 0;
        long previous = 0;
        boolean first = true;
        for (final TcpOp op : awaiting) {
            runs += first || op.token != previous ? 1 : 0;
            previous = op.token;
            first = false;
        }
        for (final TcpOp op : queued) {
            runs += first || op.token != previous ? 1 : 0;
            previous = op.token;
            first = false;
        }
        openRequests = runs;
    }

    /** {@code op} left the head of the outstanding pieces: a request ended if no piece of its token follows. */
    private void ended(final TcpOp op) {
        final TcpOp next = awaiting.isEmpty() ? queued.peekFirst() : awaiting.peekFirst();
        if (next == null || next.token != op.token) {
            openRequests--;
        }
    }

    @Override
    boolean writable() {
        return connected;
    }

    @Override
    int readInterest() {
        return connected ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT;
    }

    @Override
    int onConnectable() throws IOException {
        if (!channel.finishConnect()) {
            return 0;
        }
        connected = true;
        updateInterest();
        requests.onConnected(peer);
        markDirty();
        return 1;
    }

    @Override
    void refill() {
        if (reverseAcks && !queued.isEmpty()) {
            io.carryAcks(this); // in front of the requests: one write carries both
        }
        while (authenticated && !queued.isEmpty()) {
            final TcpOp op = queued.peekFirst();
            if (op.isPages()) { // the pages of one frame, gathered from their source
                if (!pageTables) {
                    TcpPageFrames.explode(queued, requests);
                } else if (out.capacity() - encoded < TcpPageFrames.frameLength(op)) {
                    return;
                } else {
                    awaiting.addLast(queued.pollFirst());
                    encoded = TcpPageFrames.encodePages(op, out, outMemory, outFrame, encoded);
                }
                continue;
            }
            if (op.type == TcpFrame.READ_FAILED && !readFailures) {
                queued.pollFirst(); // the reader does not read them: its read waits for its deadline, as before
                requests.release(op);
                countRequests();
                continue;
            }
            final long payload = op.payload();
            final boolean inline = payload <= INLINE_PAYLOAD;
            final int needed = TcpFrame.HEADER_LENGTH + (inline ? (int) payload : 0);
            if (out.capacity() - encoded < needed) {
                return;
            }
            queued.pollFirst();
            awaiting.addLast(op);
            final TcpOp next = queued.peekFirst();
            // pages with one imm as a PAGES frame where the peer reads them, else (or with an imm each) as WRITEV
            final boolean table = next != null && pageTables && TcpPageFrames.joinsTable(op, next, 1);
            if (next != null
                    && TcpPages.pageable(op)
                    && (table || TcpPages.joins(op, next, 1))
                    && out.capacity() - encoded >= TcpPageFrames.twoPages(op, next, table)) {
                encoded = table
                        ? pageFrames.encodeTable(op, queued, awaiting, out, outMemory, outFrame, encoded)
                        : TcpPageFrames.encodeInterleaved(op, queued, awaiting, out, outMemory, outFrame, encoded);
                continue;
            }
            outFrame.at(encoded).encode(op.type, op.imm, op.aux, op.id, op.rkey, op.remoteOffset, op.length);
            encoded += TcpFrame.HEADER_LENGTH;
            if (!inline) {
                startLarge(op.source, op.sourceOffset, op.sourceOffset + payload);
                return;
            }
            if (payload > 0) {
                MemorySegment.copy(op.source, op.sourceOffset, outMemory, encoded, payload);
                encoded += (int) payload;
            }
        }
    }

    @Override
    int onReadable() throws IOException {
        int frames = 0;
        for (int reads = 0; reads < READS_PER_EVENT && !closed(); reads++) {
            compactIn(TcpFrame.HEADER_LENGTH + TcpFrame.MAX_HELLO_PAYLOAD);
            final int room = in.remaining();
            final int read = read(in);
            if (read < 0) {
                lost(
                        authenticated
                                ? "connection closed by peer"
                                : (tls != null && tls.handshaking())
                                        ? "connection closed by the peer during the TLS handshake: it may not use TLS (tcp TLS is set "
                                                + "on this side), or may not trust this side's certificate"
                                        : "connection closed by the peer during the handshake: it may speak another wire protocol "
                                                + "version than v" + TcpFrame.VERSION
                                                + ", hold another cluster key, or require TLS",
                        null);
                return frames + 1;
            }
            if (read == 0) {
                break;
            }
            frames += parse();
            if (tls == null && read < room) {
                break; // the socket is empty: another read now would only return 0
            }
        }
        return frames;
    }

    private int parse() {
        int frames = 0;
        while (!closed() && buffered() >= TcpFrame.HEADER_LENGTH) {
            inFrame.at(inHead);
            if (inFrame.hasOtherVersion()) {
                return frames
                        + protocolError("the peer speaks wire protocol v" + (inFrame.version() & 0xFF)
                                + ", this engine v" + TcpFrame.VERSION);
            }
            if (!inFrame.hasValidPreamble()) {
                return frames + protocolError("bad magic in a frame header");
            }
            final byte type = inFrame.type();
            if (!authenticated) {
                if (type == TcpFrame.ERROR) {
                    return frames + onError();
                }
                if (type != TcpFrame.CHALLENGE) {
                    return frames + protocolError("expected CHALLENGE, got " + TcpFrame.typeName(type));
                }
                if (!onChallenge()) {
                    return frames;
                }
            } else if (type == TcpFrame.ACK || type == TcpFrame.NACK) {
                final int aux = inFrame.aux();
                final long first = inFrame.token();
                final long size = inFrame.length();
                // a NACK refuses the pages of a PAGES frame at once: their count in its imm (0 or 1: one)
                final int count = type == TcpFrame.ACK ? aux : pageTables ? Math.max(1, inFrame.imm()) : 1;
                inHead += TcpFrame.HEADER_LENGTH;
                if (!answered(type, first, count, size, aux)) {
                    return frames + 1;
                }
            } else {
                return frames + protocolError("unexpected " + TcpFrame.typeName(type) + " from the target side");
            }
            frames++;
        }
        return frames;
    }

    /**
     * A REVERSE_ACK for this connection's requests came on the peer's connection to this NIC: {@code count}
     * requests from id {@code first}, all accepted. Counts as an answer for the frame timeout.
     */
    void onReverseAck(final long first, final int count, final long bytes) {
        if (!reverseAcks) {
            protocolError("REVERSE_ACK on a connection that did not agree to them");
            return;
        }
        touch();
        answered(TcpFrame.ACK, first, count, bytes, count);
    }

    /**
     * Applies the answer to {@code count} requests from id {@code first}: an ACK (all accepted) or a NACK (one,
     * refused with code {@code aux}, {@code size} the region's or largest buffer's size). With reverse ACKs agreed,
     * an answer for later requests than the first awaiting one waits in {@link #early} until those were answered.
     * Returns false if the answer broke the protocol, which loses the connection.
     */
    private boolean answered(final byte type, final long first, final int count, final long size, final int aux) {
        final TcpOp head = awaiting.peekFirst();
        final TcpRefusal refusal = type == TcpFrame.NACK ? TcpRefusal.ofCode(aux) : null;
        final boolean inOrder = head != null && head.id == first;
        final boolean ahead = reverseAcks && head != null && first > head.id;
        if ((!inOrder && !ahead) || count < 1 || (head != null && first + count > awaitedEnd())) {
            protocolError(TcpFrame.typeName(type) + " for " + count + " requests from " + first + ", expected "
                    + (head == null ? "none" : Long.toString(head.id)) + " of " + awaiting.size() + " awaiting");
            return false;
        }
        if ((type == TcpFrame.NACK && refusal == null) || (refusal == TcpRefusal.NO_PEER_ROOM && !readFailures)) {
            protocolError("NACK with " + (refusal == null ? "unknown" : "unagreed") + " refusal code " + aux);
            return false;
        }
        if (ahead) {
            return holdEarly(new Early(refusal, first, count, size));
        }
        if (!apply(refusal, first, count, size)) {
            return false;
        }
        while (!early.isEmpty() && !closed()) {
            final TcpOp next = awaiting.peekFirst();
            final Early answer = early.getFirst();
            if (next == null || next.id != answer.first()) {
                break;
            }
            early.removeFirst();
            if (!apply(answer.refusal(), answer.first(), answer.count(), answer.size())) {
                return false;
            }
        }
        return !closed();
    }

    /** The id after the last request awaiting its answer (the ids awaiting are consecutive). */
    private long awaitedEnd() {
        final TcpOp last = awaiting.peekLast();
        return last == null ? 0 : last.id + last.pages;
    }

    /** Keeps an answer that came early, in request order; one that overlaps another broke the protocol. */
    private boolean holdEarly(final Early answer) {
        int at = early.size();
        while (at > 0 && early.get(at - 1).first() > answer.first()) {
            at--;
        }
        final boolean overlapsBefore =
                at > 0 && early.get(at - 1).first() + early.get(at - 1).count() > answer.first();
        final boolean overlapsAfter = at < early.size()
                && answer.first() + answer.count() > early.get(at).first();
        if (overlapsBefore || overlapsAfter) {
            protocolError("answers overlap at request " + answer.first());
            return false;
        }
        early.add(at, answer);
        return true;
    }

    /** Ends the {@code count} awaiting requests from {@code first}, the first awaiting one; false on a gap. */
    private boolean apply(final @Nullable TcpRefusal refusal, final long first, final int count, final long size) {
        for (int i = 0; i < count && !closed(); ) {
            final TcpOp answeredOp = awaiting.peekFirst();
            if (answeredOp == null || answeredOp.id != first + i || i + answeredOp.pages > count) {
                completeRun();
                protocolError("answer for requests " + first + " to " + (first + count - 1) + " skips or splits "
                        + "request " + (first + i));
                return false;
            }
            awaiting.pollFirst();
            ended(answeredOp);
            i += answeredOp.pages;
            if (refusal == null && (TcpPages.pageable(answeredOp) || answeredOp.isPages())) {
                joinRun(answeredOp);
            } else {
                completeRun();
                requests.end(answeredOp, refusal == null ? null : refusal(answeredOp, refusal, size));
            }
        }
        completeRun();
        return true;
    }

    /** An answer that came before those of earlier requests; {@code refusal} null for an ACK. */
    private record Early(@Nullable TcpRefusal refusal, long first, int count, long size) {}

    /**
     * An acknowledged page (or small write) joins the run of its token, reported in one go by {@link #completeRun}:
     * the pages of a paged write cost the engine one completion per ACK, not one per page.
     */
    private void joinRun(final TcpOp op) {
        if (runPieces > 0 && op.token != runToken) {
            completeRun();
        }
        runToken = op.token;
        runPieces += op.pages;
        runBytes += op.length;
        requests.release(op);
    }

    private void completeRun() {
        if (runPieces > 0) {
            final int pieces = runPieces;
            runPieces = 0;
            requests.completed(runToken, runBytes, pieces);
            runBytes = 0;
        }
    }

    /**
     * Checks the peer's CHALLENGE, then proves this side with AUTH, which the queued requests follow. False if it
     * is not complete yet or failed.
     */
    private boolean onChallenge() {
        final long length = inFrame.length();
        final int fixed = TcpFrame.NONCE_LENGTH + TcpAuthenticator.PROOF_LENGTH;
        if (length < fixed + 3 || length > fixed + TcpFrame.MAX_ADDRESS) {
            protocolError("CHALLENGE of " + length + " bytes");
            return false;
        }
        if (buffered() < TcpFrame.HEADER_LENGTH + length) {
            return false;
        }
        final int at = inHead + TcpFrame.HEADER_LENGTH;
        final byte[] peerNonce = new byte[TcpFrame.NONCE_LENGTH];
        final byte[] proof = new byte[TcpAuthenticator.PROOF_LENGTH];
        final byte[] address = new byte[(int) length - fixed];
        in.get(at, peerNonce).get(at + TcpFrame.NONCE_LENGTH, proof).get(at + fixed, address);
        final long incarnation = inFrame.token();
        final NetworkAddress announced;
        try {
            announced = NetworkAddress.fromBytes(address);
        } catch (final MalformedDescriptorException e) {
            protocolError("CHALLENGE with a malformed address: " + e.getMessage());
            return false;
        }
        if (!announced.equals(peer.address())) {
            // The proof covers the address the acceptor announced: a member's genuine proof for its own address,
            // forwarded by whoever we dialled, must not make that host a member (issue 16, item 1).
            final String why = "dialled " + peer.address().describe() + " but the acceptor proved "
                    + announced.describe() + " (a relay, a stale descriptor or a reused address)";
            io.count(TcpCounter.HANDSHAKE_RELAYED, peer.toString(), why);
            lost("handshake refused: " + why, null);
            return false;
        }
        final TcpAuthenticator.Handshake handshake = new TcpAuthenticator.Handshake(
                nonce, io.incarnation(), io.addressBytes(), peerNonce, incarnation, address);
        if (!io.authenticator().verify(true, handshake, proof)) {
            io.count(
                    TcpCounter.HANDSHAKE_AUTH_FAILED,
                    peer.toString(),
                    "the peer's proof matches no " + "accepted cluster key");
            lost("the peer could not prove the cluster key (configure the same tcp.clusterKey on both)", null);
            return false;
        }
        inHead += TcpFrame.HEADER_LENGTH + (int) length;
        authenticated = true;
        remoteIncarnation = incarnation;
        reverseAcks = (io.features() & inFrame.aux() & TcpFrame.FEATURE_REVERSE_ACK) != 0;
        pageTables = (io.features() & inFrame.aux() & TcpFrame.FEATURE_PAGE_TABLE) != 0;
        readFailures = (io.features() & inFrame.aux() & TcpFrame.FEATURE_READ_FAILED) != 0;
        compactOut();
        outFrame.at(encoded).encode(TcpFrame.AUTH, 0, 0, 0, 0, 0, TcpAuthenticator.PROOF_LENGTH);
        out.put(encoded + TcpFrame.HEADER_LENGTH, io.authenticator().prove(false, handshake));
        encoded += TcpFrame.HEADER_LENGTH + TcpAuthenticator.PROOF_LENGTH;
        try {
            pipelineTls(peer.toString());
        } catch (final IOException e) {
            lost("the TLS socket's thread could not start: " + e, e);
            return false;
        }
        markDirty();
        requests.onOutboundHello(peer, incarnation);
        return true;
    }

    /** The peer refused the handshake with ERROR; reports its message. */
    private int onError() {
        final long length = inFrame.length();
        if (length < 0 || length > TcpFrame.MAX_HELLO_PAYLOAD) {
            return protocolError("ERROR of " + length + " bytes");
        }
        if (buffered() < TcpFrame.HEADER_LENGTH + length) {
            return 0;
        }
        final byte[] message = new byte[(int) length];
        in.get(inHead + TcpFrame.HEADER_LENGTH, message);
        final String text = new String(message, java.nio.charset.StandardCharsets.US_ASCII);
        io.count(TcpCounter.HANDSHAKE_VERSION, peer.toString(), text);
        lost("the peer refused the handshake (code " + inFrame.aux() + "): " + text, null);
        return 1;
    }

    private TransferEngineException refusal(final TcpOp op, final TcpRefusal refusal, final long size) {
        final RemoteAccessException.Reason reason = refusal.reason();
        if (reason == null) { // NO_PEER_ROOM: the owner is at a limit, a later retry may find room
            return new BackPressureException("peer " + peer + " could not serve the " + TcpFrame.typeName(op.type)
                    + " at offset " + op.remoteOffset + " of length " + op.length + ": it has no room for a connection"
                    + " back to this side (all its tcp.maxPeers peers are connected); retry later, or raise"
                    + " tcp.maxPeers there");
        }
        return new RemoteAccessException(reason, describeRefusal(op, refusal, size));
    }

    private String describeRefusal(final TcpOp op, final TcpRefusal refusal, final long size) {
        if (op.isSend()) {
            return "peer " + peer + " refused a send of " + op.length + " bytes; largest posted receive buffer: "
                    + (size < 0 ? "none" : size + " bytes");
        }
        // the rkey stays out: a message may be logged or shown where the key must not go
        return "peer " + peer + " refused a " + TcpFrame.typeName(op.type)
                + (op.isPages() ? " of " + op.pages + " pages of " + op.pageLength + " bytes, the first" : "")
                + " at offset " + op.remoteOffset + " of length " + (op.isPages() ? op.pageLength : op.length)
                + (refusal == TcpRefusal.OUT_OF_BOUNDS || size >= 0 ? "; region size " + size : "");
    }

    private int protocolError(final String what) {
        io.count(TcpCounter.MALFORMED_FRAMES, peer.toString(), what);
        lost("protocol error: " + what, null);
        return 1;
    }

    @Override
    void lost(final String reason, final @Nullable Throwable cause) {
        if (closed()) {
            return;
        }
        closeChannel();
        requests.onOutboundLost(this, reason);
        failAll(reason, cause, false);
    }

    /** Closes because the domain closes; pending requests fail with {@link EngineClosedException}. */
    void closeForShutdown() {
        if (closed()) {
            return;
        }
        closeChannel();
        failAll("domain closed", null, true);
    }

    private void failAll(final String reason, final @Nullable Throwable cause, final boolean shutdown) {
        if (awaiting.isEmpty() && queued.isEmpty()) {
            return;
        }
        // One cause for every request of the connection: building one exception each would cost a stack trace each.
        final TransferEngineException error = shutdown
                ? new EngineClosedException(reason)
                : cause == null
                        ? new PeerUnreachableException(peer.address(), peer + ": " + reason)
                        : new PeerUnreachableException(peer.address(), peer + ": " + reason, cause);
        openRequests = 0;
        TcpOp op;
        while ((op = awaiting.pollFirst()) != null || (op = queued.pollFirst()) != null) {
            requests.end(op, error);
        }
    }
}
