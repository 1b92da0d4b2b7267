package dev.transferengine.transport.fabric;

import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.RecordingDomainListener;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Counts how often each token ended (completed, failed, received or withdrawn), so that a second report shows. */
final class EndCountingListener extends RecordingDomainListener {
    final Map<Long, Integer> ends = new ConcurrentHashMap<>();
    final Map<Long, Integer> withdrawn = new ConcurrentHashMap<>();

    @Override
    public void onComplete(final long token, final long bytes) {
        ends.merge(token, 1, Integer::sum);
        super.onComplete(token, bytes);
    }

    @Override
    public void onFailed(final long token, final TransferEngineException error) {
        ends.merge(token, 1, Integer::sum);
        super.onFailed(token, error);
    }

    @Override
    public void onReceive(final long token, final int length) {
        ends.merge(token, 1, Integer::sum);
        super.onReceive(token, length);
    }

    @Override
    public void onReceiveWithdrawn(final long token) {
        ends.merge(token, 1, Integer::sum);
        withdrawn.merge(token, 1, Integer::sum);
    }
}
