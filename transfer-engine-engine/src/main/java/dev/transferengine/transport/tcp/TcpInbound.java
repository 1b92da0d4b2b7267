package dev.transferengine.transport.tcp;

import dev.transferengine.MalformedDescriptorException;
import dev.transferengine.NetAddr;
import dev.transferengine.RemoteAccessException.Reason;
import dev.transferengine.spi.DeviceCopyStream;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;

import org.jspecify.annotations.Nullable;

/**
 * A connection a peer opened to this domain: it reads the peer's HELLO and requests and answers each request,
 * in order, with ACK or NACK. A request's rkey and bounds (or, for a SEND, a fitting receive buffer) are checked
 * from its header before any byte of the payload is placed; the payload is then read from the socket straight
 * into the target memory. A refused request's payload is read into the read buffer and discarded, so the target
 * stays untouched. A corrupt stream (bad magic, version, type or absurd length) closes the connection. When the
 * peer stops reading answers, this side stops reading requests. Worker thread only.
 */
final class TcpInbound extends TcpConnection {

    private static final int IN_CAPACITY = 256 * 1024;
    private static final int OUT_CAPACITY = 64 * 1024;
    /** Room one answer needs in {@link #out}: the largest is a HELLO. */
    private static final int ANSWER_ROOM = TcpFrame.HEADER_LENGTH + TcpFrame.MAX_HELLO_PAYLOAD;
    /**
     * After a payload this large another large one is likely, so the read that ends it takes only one more
     * header: the next payload then lands in place instead of in the read buffer.
     */
    private static final long LARGE_PAYLOAD = 64 * 1024;

    private static final int AT_HEADER = 0;
    private static final int PLACING = 1;
    private static final int DISCARDING = 2;

    /** A placed request held back until its payload reached the device (or an earlier one did). */
    private static final class StagedAnswer {
        final byte type;
        final long id;
        final int imm;
        final long rkey;
        final long offset;
        final long length;
        final long receiveToken;
        final TcpStaging.@Nullable Mirror mirror;
        final long at;
        long ticket = DeviceCopyStream.BUSY;

        StagedAnswer(final byte type, final long id, final int imm, final long rkey, final long offset,
                     final long length, final long receiveToken, final TcpStaging.@Nullable Mirror mirror,
                     final long at) {
            this.type = type;
            this.id = id;
            this.imm = imm;
            this.rkey = rkey;
            this.offset = offset;
            this.length = length;
            this.receiveToken = receiveToken;
            this.mirror = mirror;
            this.at = at;
        }
    }

    private final ArrayDeque<StagedAnswer> staged = new ArrayDeque<>();
    private final ByteBuffer[] scatter = new ByteBuffer[2];
    private int state = AT_HEADER;
    private boolean helloSeen;
    private boolean paused;
    private boolean lastPayloadLarge;
    private String remote;

    private byte type;
    private long id;
    private int imm;
    private long rkey;
    private long offset;
    private long length;
    private @Nullable TcpMemory target;
    private long receiveToken;
    private long position;
    private long end;
    private long discard;
    private Reason refusal = Reason.MALFORMED;
    private long refusalSize;

    TcpInbound(final TcpDomain domain, final SocketChannel channel) throws IOException {
        super(domain, channel, SelectionKey.OP_READ, OUT_CAPACITY, IN_CAPACITY);
        this.remote = String.valueOf(channel.getRemoteAddress());
    }

    @Override
    boolean writable() {
        return true;
    }

    @Override
    int readInterest() {
        return paused ? 0 : SelectionKey.OP_READ;
    }

    @Override
    int onReadable() throws IOException {
        int frames = 0;
        for (int reads = 0; !closed(); reads++) {
            frames += consume();
            if (closed() || paused || reads == READS_PER_EVENT) {
                break;
            }
            final long read = state == PLACING && buffered() == 0 ? readIntoTarget() : readIntoBuffer();
            if (read < 0) {
                lost("connection closed by peer", null);
                break;
            }
            if (read == 0) {
                break;
            }
        }
        return frames;
    }

    @Override
    int afterFlush() throws IOException {
        if (paused && !closed() && hasAnswerRoom()) {
            paused = false;
            updateInterest();
            return onReadable();
        }
        return 0;
    }

    private long readIntoBuffer() throws IOException {
        compactIn(ANSWER_ROOM);
        if (state != AT_HEADER || !lastPayloadLarge) {
            return channel.read(in);
        }
        // Read just the next header: if another large payload follows, it then lands in place, not in here.
        in.limit(in.position() + TcpFrame.HEADER_LENGTH - buffered());
        final int read = channel.read(in);
        in.limit(in.capacity());
        return read;
    }

    /** Reads the rest of a payload straight into its target, and what follows it into the read buffer. */
    private long readIntoTarget() throws IOException {
        final TcpMemory memory = target;
        in.clear();
        inHead = 0;
        in.limit(end - position >= LARGE_PAYLOAD ? TcpFrame.HEADER_LENGTH : in.capacity());
        final ByteBuffer window = memory.window(position, end);
        final int before = window.position();
        scatter[0] = window;
        scatter[1] = in;
        final long read = channel.read(scatter);
        in.limit(in.capacity());
        position += window.position() - before;
        return read;
    }

    /** Parses and acts on buffered bytes; returns the frames finished. */
    private int consume() {
        int frames = 0;
        while (!closed()) {
            if (state == AT_HEADER) {
                if (buffered() < TcpFrame.HEADER_LENGTH) {
                    return frames;
                }
                if (!hasAnswerRoom()) {
                    paused = true;
                    updateInterest();
                    return frames;
                }
                if (!begin()) {
                    return frames;
                }
                if (state == AT_HEADER) {
                    frames++;
                    continue;
                }
            }
            if (state == PLACING) {
                final TcpMemory memory = target;
                if (!memory.live()) {
                    refuse(Reason.REGION_DEREGISTERED, memory.size());
                    discard = end - position;
                    continue;
                }
                final int available = (int) Math.min(buffered(), end - position);
                if (available > 0) {
                    memory.copyIn(inMemory, inHead, position, available);
                    inHead += available;
                    position += available;
                }
                if (position < end) {
                    return frames;
                }
                placed();
            } else {
                final int skipped = (int) Math.min(buffered(), discard);
                inHead += skipped;
                discard -= skipped;
                if (discard > 0) {
                    return frames;
                }
                answer(TcpFrame.NACK, refusal.ordinal(), refusalSize);
            }
            state = AT_HEADER;
            lastPayloadLarge = length >= LARGE_PAYLOAD;
            frames++;
        }
        return frames;
    }

    private boolean hasAnswerRoom() {
        if (out.capacity() - encoded >= ANSWER_ROOM) {
            return true;
        }
        compactOut();
        return out.capacity() - encoded >= ANSWER_ROOM;
    }

    /** Starts on the frame at {@link #inHead}; false if it must wait for more bytes or broke the protocol. */
    private boolean begin() {
        inFrame.at(inHead);
        if (!inFrame.hasValidPreamble()) {
            return malformed("bad magic or version in a frame header");
        }
        final byte frameType = inFrame.type();
        if (!helloSeen) {
            return frameType == TcpFrame.HELLO ? onHello() : malformed("expected HELLO, got "
                + TcpFrame.typeName(frameType));
        }
        final long frameLength = inFrame.length();
        switch (frameType) {
            case TcpFrame.WRITE, TcpFrame.WRITE_IMM, TcpFrame.IMM -> {
                if (frameLength < 0 || frameLength > TcpFrame.MAX_WRITE_PAYLOAD
                    || frameType == TcpFrame.IMM && frameLength != 0) {
                    return malformed(TcpFrame.typeName(frameType) + " with length " + frameLength);
                }
                final boolean flagged = takeHeader();
                final TcpMemory memory = domain.regions().lookup(rkey);
                if (flagged) {
                    refuse(Reason.MALFORMED, -1);
                } else if (memory == null) {
                    refuse(Reason.UNKNOWN_KEY, -1);
                } else if (!memory.contains(offset, length)) {
                    refuse(Reason.OUT_OF_BOUNDS, memory.size());
                } else {
                    place(memory, offset);
                }
            }
            case TcpFrame.SEND -> {
                if (frameLength < 0 || frameLength > Integer.MAX_VALUE) {
                    return malformed("SEND with length " + frameLength);
                }
                final boolean flagged = takeHeader();
                final TcpReceives.Posted posted = flagged ? null : domain.receives().takeFitting(length);
                if (flagged) {
                    refuse(Reason.MALFORMED, -1);
                } else if (posted == null) {
                    refuse(Reason.NO_RECEIVE_BUFFER, domain.receives().largest());
                } else {
                    receiveToken = posted.token();
                    place(posted.memory(), 0);
                }
            }
            default -> {
                return malformed("unexpected " + TcpFrame.typeName(frameType) + " from the initiator side");
            }
        }
        return true;
    }

    /** Copies the request's header fields and consumes it; returns true if it sets flags this version lacks. */
    private boolean takeHeader() {
        type = inFrame.type();
        id = inFrame.token();
        imm = inFrame.imm();
        rkey = inFrame.rkey();
        offset = inFrame.offset();
        length = inFrame.length();
        final boolean flagged = inFrame.flags() != 0;
        inHead += TcpFrame.HEADER_LENGTH;
        return flagged;
    }

    private void place(final TcpMemory memory, final long at) {
        target = memory;
        position = at;
        end = at + length;
        state = PLACING;
    }

    private void refuse(final Reason reason, final long size) {
        target = null;
        refusal = reason;
        refusalSize = size;
        discard = length;
        state = DISCARDING;
    }

    /**
     * The payload is in place: report it, then acknowledge. A payload placed in a device region's mirror is
     * reported only once its copy to the device finished; answers after it wait too, as answers go in order.
     */
    private void placed() {
        final TcpMemory memory = target;
        target = null;
        final TcpStaging.Mirror mirror = memory == null || length == 0 ? null : memory.mirror();
        if (mirror != null || !staged.isEmpty()) {
            final StagedAnswer answer = new StagedAnswer(type, id, imm, rkey, offset, length, receiveToken, mirror,
                position - length);
            if (mirror != null) {
                answer.ticket = TcpStaging.copyIn(mirror, answer.at, length);
            }
            staged.addLast(answer);
            return;
        }
        report(type, imm, length, receiveToken);
        answer(TcpFrame.ACK, 0, length);
    }

    private void report(final byte frameType, final int frameImm, final long frameLength, final long token) {
        if (frameType == TcpFrame.SEND) {
            domain.listener().onReceive(token, (int) frameLength);
        } else {
            if (frameType != TcpFrame.WRITE) {
                domain.listener().onImm(frameImm);
            }
            if (frameLength > 0) {
                domain.listener().onBytesReceived(frameLength);
            }
        }
    }

    /** Reports and acknowledges, in order, the held-back payloads whose device copies finished. */
    int drainStaged() {
        int work = 0;
        StagedAnswer answer;
        while (!closed() && (answer = staged.peekFirst()) != null && hasAnswerRoom()) {
            if (answer.mirror != null) {
                if (answer.ticket == DeviceCopyStream.BUSY) {
                    answer.ticket = TcpStaging.copyIn(answer.mirror, answer.at, answer.length);
                }
                if (answer.ticket == DeviceCopyStream.BUSY || !answer.mirror.stream().isDone(answer.ticket)) {
                    break;
                }
            }
            staged.pollFirst();
            report(answer.type, answer.imm, answer.length, answer.receiveToken);
            outFrame.at(encoded).encode(TcpFrame.ACK, 0, 0, answer.id, answer.rkey, answer.offset, answer.length);
            encoded += TcpFrame.HEADER_LENGTH;
            markDirty();
            work++;
        }
        return work;
    }

    private void answer(final byte answerType, final int aux, final long lengthField) {
        outFrame.at(encoded).encode(answerType, 0, aux, id, rkey, offset, lengthField);
        encoded += TcpFrame.HEADER_LENGTH;
        markDirty();
    }

    private boolean onHello() {
        final long helloLength = inFrame.length();
        if (helloLength < 3 || helloLength > TcpFrame.MAX_HELLO_PAYLOAD) {
            return malformed("HELLO of " + helloLength + " bytes");
        }
        if (buffered() < TcpFrame.HEADER_LENGTH + helloLength) {
            return false;
        }
        final byte[] bytes = new byte[(int) helloLength];
        in.get(inHead + TcpFrame.HEADER_LENGTH, bytes);
        final NetAddr announced;
        try {
            announced = NetAddr.fromBytes(bytes);
            TcpAddress.toSocketAddress(announced);
        } catch (final MalformedDescriptorException e) {
            return malformed("HELLO with a malformed address: " + e.getMessage());
        }
        final long incarnation = inFrame.token();
        inHead += TcpFrame.HEADER_LENGTH + (int) helloLength;
        helloSeen = true;
        final TcpPeer peer = domain.onInboundHello(announced, incarnation);
        remote = peer + " (from " + remote + ")";
        final byte[] self = domain.addressBytes();
        outFrame.at(encoded).encode(TcpFrame.HELLO, 0, 0, domain.incarnation(), 0, 0, self.length);
        out.put(encoded + TcpFrame.HEADER_LENGTH, self);
        encoded += TcpFrame.HEADER_LENGTH + self.length;
        markDirty();
        return true;
    }

    private boolean malformed(final String what) {
        domain.onMalformed(remote, what);
        lost("malformed frame: " + what, null);
        return false;
    }

    @Override
    void lost(final String reason, final @Nullable Throwable cause) {
        if (!closed()) {
            closeChannel();
            domain.onInboundClosed(this, remote, reason);
        }
    }
}
