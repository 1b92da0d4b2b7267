package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.WriteDescriptor;

/**
 * The owner's side of reads: streams the bytes of a READ this NIC accepted back to the reader as READ_DATA, on this
 * side's own connection to it (the address the reader proved), through the staging for device memory; and tells the
 * reader with READ_FAILED when it stops serving one part-way ({@link TcpFrame}), so the read fails there at once
 * instead of at its deadline. Worker thread only.
 */
final class TcpReadServer {

    /** The token of READ_DATA and READ_FAILED frames this side sends a reader: no engine operation waits for them. */
    static final long SERVE_TOKEN = -2L;

    private final TcpDomain domain;
    private final TcpPeers peers;
    private final TcpStaging staging;
    /** What {@link #serve} fills for each READ it serves. */
    private final WriteDescriptor serving = new WriteDescriptor();

    TcpReadServer(final TcpDomain domain, final TcpPeers peers, final TcpStaging staging) {
        this.domain = domain;
        this.peers = peers;
        this.staging = staging;
    }

    /**
     * Streams a checked READ's bytes back to {@code reader} as READ_DATA for its read {@code readId}. Best effort
     * like any write: if the reader cannot be reached its read times out there, and bytes it no longer waits for are
     * refused by it. Returns false, serving nothing, if this side has no room for a connection to the reader (every
     * one of its {@code tcp.maxPeers} peers is connected): the caller answers the READ. A domain that is closing
     * serves nothing either, but answers true: the reader's read ends with its connection.
     */
    boolean serve(
            final NetworkAddress reader,
            final TcpMemory memory,
            final long offset,
            final long length,
            final int readId) {
        final TcpPeer target;
        try {
            target = peers.get(domain.resolve(reader));
        } catch (final BackPressureException e) {
            return false;
        } catch (final TransferEngineException e) {
            return true; // the domain is closing: the reader's read ends with the connection, as any other
        }
        if (target == null) {
            return true; // forgotten since it was resolved: the same
        }
        serving.token(SERVE_TOKEN)
                .source(memory.segment(), offset, 0, length)
                .target(target.handle(), 0, 0, 0)
                .imm(true, readId);
        try {
            if (memory.device() >= 0 && length > 0) {
                staging.stageOut(domain, target, TcpFrame.READ_DATA, memory, serving);
            } else {
                final TcpOp op = domain.acquire().write(TcpFrame.READ_DATA, serving);
                op.served = memory;
                memory.serveStarted();
                domain.post(target, op);
            }
        } finally {
            serving.clear();
        }
        return true;
    }

    /**
     * A staged read stopped part-way for {@code why}, after {@code sent} of its bytes were posted: READ_FAILED goes
     * to the reader behind them, so the reader fails the read once those bytes are in place. A reader that did not
     * announce {@link TcpFrame#FEATURE_READ_FAILED} is sent nothing ({@link TcpOutbound} drops the frame).
     */
    void stopped(final TcpPeer reader, final int readId, final TcpReadFailure why, final long sent) {
        domain.post(reader, domain.acquire().readFailed(SERVE_TOKEN, readId, why, sent));
    }
}
