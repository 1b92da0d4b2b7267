package dev.transferengine.core;

import dev.transferengine.NetworkAddress;
import dev.transferengine.NicCounter;
import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.DomainListener;

import org.jspecify.annotations.Nullable;

/**
 * The events of one NIC of a {@link DomainGroup}. They are queued and handled by the group after the NIC's poll
 * returns, in its duty cycle; imm reservations are
 * answered at once, and {@link #onBytesReceived} is a counter.
 */
final class NicEvents implements DomainListener {

    private final int group;
    private final int nic;
    private final CompletionQueue completions;
    private final ImmCountTable imms;
    private final Counters counters;

    NicEvents(
            final int group,
            final int nic,
            final CompletionQueue completions,
            final ImmCountTable imms,
            final Counters counters) {
        this.group = group;
        this.nic = nic;
        this.completions = completions;
        this.imms = imms;
        this.counters = counters;
    }

    @Override
    public void onComplete(final long token, final long bytes) {
        completions.add(CompletionQueue.COMPLETE, nic, token, bytes, null);
    }

    @Override
    public void onComplete(final long token, final long bytes, final int pieces) {
        completions.add(CompletionQueue.COMPLETE, nic, token, bytes, null, pieces);
    }

    @Override
    public void onFailed(final long token, final TransferEngineException error) {
        completions.add(CompletionQueue.FAILED, nic, token, 0, error);
    }

    @Override
    public void onFailed(final long token, final TransferEngineException error, final int pieces) {
        completions.add(CompletionQueue.FAILED, nic, token, 0, error, pieces);
    }

    @Override
    public void onReceive(final long token, final int length) {
        completions.add(CompletionQueue.RECEIVE, nic, token, length, null);
    }

    @Override
    public void onReceiveWithdrawn(final long token) {
        completions.add(CompletionQueue.RECEIVE_WITHDRAWN, nic, token, 0, null);
    }

    @Override
    public long reserveImm(final @Nullable NetworkAddress peer, final int imm) {
        return imms.reserve(peer, imm);
    }

    @Override
    public long reserveImms(final @Nullable NetworkAddress peer, final int imm, final int count) {
        return imms.reserve(peer, imm, count);
    }

    @Override
    public void releaseImms(final long reservation, final int count) {
        imms.release(reservation, count);
    }

    @Override
    public void onImm(final long reservation) {
        completions.add(CompletionQueue.IMM, nic, 0, reservation, null);
    }

    @Override
    public void onImms(final long reservation, final int count) {
        completions.add(CompletionQueue.IMM, nic, 0, reservation, null, count);
    }

    @Override
    public void releaseImm(final long reservation) {
        imms.release(reservation);
    }

    @Override
    public void onImmAbandoned(final NetworkAddress peer, final int imm, final int missing, final String cause) {
        imms.onAbandoned(new ImmAbandonedException(peer, imm, missing, cause));
    }

    @Override
    public void onBytesReceived(final long bytes) {
        counters.add(group, nic, NicCounter.BYTES_RECEIVED, bytes);
    }
}
