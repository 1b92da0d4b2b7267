package dev.transferengine.transport.tcp;

import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.DeviceCopyStream;
import dev.transferengine.spi.DomainListener;

import java.util.ArrayDeque;
import java.util.Objects;

/**
 * The answers of one {@link TcpInbound}: an ACK or NACK per request, encoded into its write buffer in request order.
 * An answer whose payload still travels to the device is held back ({@link TcpHeldAnswer}), and every answer after it
 * waits behind it; an ACK for the next page of a WRITEV frame extends the ACK still waiting in the buffer.
 *
 * <p>Where the peer agreed to reverse ACKs and this side posted to it within the last 50 bounds (1 ms by default:
 * traffic goes both ways), an ACK is held instead, and the ACKs after it join it, until a request of this side to the
 * peer carries them as a REVERSE_ACK ({@link TcpIo#carryAcks}) or {@code tcp.reverseAckMicros} passed and they leave here as one
 * ACK ({@link TcpIo#startStep}); any other answer first sends the held ACK here, so answers on this connection stay
 * in order. Worker thread only.
 */
final class TcpAnswers {

    /** Room one answer needs in the connection's write buffer. */
    static final int ANSWER_ROOM = TcpFrame.HEADER_LENGTH;
    /**
     * ACKs are held for a reverse ride only while this side posted to the peer within this many times the bound
     * ({@code tcp.reverseAckMicros}): 1 ms at the default 20 us.
     */
    static final int RECENT_REQUEST_BOUNDS = 50;

    private final TcpInbound connection;
    private final TcpTargets targets;
    private final TcpHandshake.Connector connector;
    private final ArrayDeque<TcpHeldAnswer> held = new ArrayDeque<>();

    // the ACK held for a reverse ride: requests heldFirst .. heldFirst + heldCount - 1, all accepted
    private boolean ackHeld;
    private long heldFirst;
    private int heldCount;
    private long heldBytes;
    private long heldSince;
    /** The poll step {@link #mayHoldAck} last asked the NIC in, and its answer: once per step, not once per page. */
    private long holdCheckedAt = Long.MIN_VALUE;

    private boolean holdAllowed;

    TcpAnswers(final TcpInbound connection, final TcpTargets targets, final TcpHandshake.Connector connector) {
        this.connection = connection;
        this.targets = targets;
        this.connector = connector;
    }

    /** True while an answer is held back: every later answer must wait behind it. */
    boolean holding() {
        return !held.isEmpty();
    }

    /** True if one more answer fits in the write buffer, after moving what is unsent to its front if need be. */
    boolean hasRoom() {
        final int room = ackHeld ? 2 * ANSWER_ROOM : ANSWER_ROOM; // the held ACK may have to go first
        if (connection.out.capacity() - connection.encoded >= room) {
            return true;
        }
        connection.compactOut();
        return connection.out.capacity() - connection.encoded >= room;
    }

    /**
     * Encodes the answer to the {@code count} requests from {@code id}: an ACK of them all ({@code aux} = {@code
     * count}), or a NACK refusing them all with code {@code aux} (the count in its imm when above 1, which only a peer
     * that announced {@link TcpFrame#FEATURE_PAGE_TABLE} is sent). An ACK for a page ({@code page}) or for the pages
     * of a PAGES frame extends the ACK encoded last if that one ends at the request before.
     */
    void answer(final byte type, final int aux, final int count, final long id, final long length, final boolean page) {
        if (type == TcpFrame.ACK && ackHeld && id == heldFirst + heldCount) {
            heldCount += count;
            heldBytes += length;
            return;
        }
        if (type == TcpFrame.ACK && !ackHeld && mayHoldAck()) {
            ackHeld = true;
            heldFirst = id;
            heldCount = count;
            heldBytes = length;
            heldSince = connection.io.now();
            connection.io.holdAck(this);
            return;
        }
        if (ackHeld) {
            connection.io.releaseAck(this);
            sendHeldAck();
        }
        if (type != TcpFrame.ACK || !page || !extendAck(id, count, length)) {
            // rkey and offset stay 0: the initiator matches answers by id alone
            connection
                    .outFrame
                    .at(connection.encoded)
                    .encode(type, type == TcpFrame.NACK && count > 1 ? count : 0, aux, id, 0, 0, length);
            connection.encoded += TcpFrame.HEADER_LENGTH;
        }
        connection.markDirty();
    }

    /** True if an ACK may wait for a request of ours to the peer to carry it: the peer agreed, and we post to it. */
    private boolean mayHoldAck() {
        if (!connector.readsReverseAcks()) {
            return false;
        }
        if (holdCheckedAt != connection.io.now()) {
            holdCheckedAt = connection.io.now();
            holdAllowed = targets.mayHoldAck(connector.address(), connector.incarnation());
        }
        return holdAllowed;
    }

    /** Holds {@code answer} back behind those held already, until {@link #release} finds its device copy done. */
    void hold(final TcpHeldAnswer answer) {
        held.addLast(answer);
    }

    /**
     * Reports and answers, in order, the held answers whose device copies finished, as far as the write buffer has
     * room; returns the answers written. A failed device copy loses the connection.
     */
    int release() {
        int work = 0;
        TcpHeldAnswer answer;
        while (!connection.closed() && (answer = held.peekFirst()) != null && hasRoom()) {
            try {
                final DeviceCopyStream stream = answer.stream();
                if (stream != null && !stream.isDone(answer.ticket())) {
                    break;
                }
            } catch (final DeviceUnavailableException e) {
                connection.lost("copy to the device failed: " + e.getMessage(), e);
                return work + 1;
            }
            held.pollFirst();
            if (answer.type() == TcpFrame.NACK) {
                answer(TcpFrame.NACK, answer.imm(), answer.count(), answer.id(), answer.length(), false);
            } else if (answer.type() == TcpFrame.READ_FAILED) {
                targets.reads()
                        .stopped(
                                connector.address(),
                                (int) answer.receiveToken(),
                                Objects.requireNonNull(TcpReadFailure.ofCode(answer.imm()), "checked when read"));
                answer(TcpFrame.ACK, 1, 1, answer.id(), 0, false);
            } else {
                targets.deliver(
                        answer.type(), answer.reservation(), answer.length(), answer.receiveToken(), answer.count());
                answer(TcpFrame.ACK, answer.count(), answer.count(), answer.id(), answer.length(), false);
            }
            work++;
        }
        return work;
    }

    /** When the ACK held for a reverse ride began to wait, on the poll clock. */
    long heldSince() {
        return heldSince;
    }

    /** Sends the ACK held for a reverse ride on this connection after all: no request to the peer came in time. */
    void sendHeldAck() {
        ackHeld = false;
        hasRoom(); // moves unsent bytes to the front if need be: room for it was kept
        connection.outFrame.at(connection.encoded).encode(TcpFrame.ACK, 0, heldCount, heldFirst, 0, 0, heldBytes);
        connection.encoded += TcpFrame.HEADER_LENGTH;
        connection.markDirty();
    }

    /** True if the ACK held here may ride on {@code outbound}: it goes to this connection's peer, as it is now. */
    boolean ridesOn(final TcpOutbound outbound) {
        return ackHeld
                && !connection.closed()
                && outbound.carriesReverseAcks()
                && outbound.remoteIncarnation() == connector.incarnation()
                && outbound.peer().address().equals(connection.peerAddress());
    }

    /** Encodes the held ACK as a REVERSE_ACK at {@code frame}, for a request to the peer to carry; returns its size. */
    int encodeReverse(final TcpFrame frame) {
        ackHeld = false;
        frame.encode(TcpFrame.REVERSE_ACK, 0, heldCount, heldFirst, connector.connectionId(), 0, heldBytes);
        return TcpFrame.HEADER_LENGTH;
    }

    /** The connection closes: gives back the imm reservations of held answers, which were never reported. */
    void abandon() {
        if (ackHeld) {
            ackHeld = false;
            connection.io.releaseAck(this);
        }
        for (final TcpHeldAnswer answer : held) {
            if (answer.reservation() != DomainListener.IMM_REFUSED) {
                targets.listener().releaseImms(answer.reservation(), answer.count());
            }
        }
        held.clear();
    }

    /**
     * Answers the {@code count} pages from {@code id} by extending the ACK encoded last, if it still waits whole in the
     * write buffer and ends at the page before: a paged write then costs its sender one answer per run of pages.
     */
    private boolean extendAck(final long id, final int count, final long length) {
        final int last = connection.encoded - TcpFrame.HEADER_LENGTH;
        if (last < connection.out.position()) {
            return false;
        }
        final TcpFrame frame = connection.outFrame.at(last);
        if (frame.type() != TcpFrame.ACK || frame.token() + frame.aux() != id) {
            return false;
        }
        frame.ackMore(count, length);
        return true;
    }
}
