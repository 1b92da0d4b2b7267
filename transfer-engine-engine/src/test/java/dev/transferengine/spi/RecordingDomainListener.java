package dev.transferengine.spi;

import dev.transferengine.exceptions.TransferEngineException;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Records what a domain reports, in arrival order, for the transports' domain-level tests. Safe to read from
 * another thread than the one polling the domain.
 */
public class RecordingDomainListener implements DomainListener {

    public final Map<Long, Long> writesDone = Collections.synchronizedMap(new LinkedHashMap<>());
    public final Map<Long, TransferEngineException> writesFailed = Collections.synchronizedMap(new LinkedHashMap<>());
    public final Map<Long, Long> sendsDone = Collections.synchronizedMap(new LinkedHashMap<>());
    public final Map<Long, TransferEngineException> sendsFailed = Collections.synchronizedMap(new LinkedHashMap<>());
    public final Map<Long, Integer> receives = Collections.synchronizedMap(new LinkedHashMap<>());
    public final List<Integer> imms = new CopyOnWriteArrayList<>();
    public volatile long bytesReceived;

    @Override
    public void onWriteComplete(final long token, final long bytes) {
        writesDone.put(token, bytes);
    }

    @Override
    public void onWriteFailed(final long token, final TransferEngineException error) {
        writesFailed.put(token, error);
    }

    @Override
    public void onSendComplete(final long token, final long bytes) {
        sendsDone.put(token, bytes);
    }

    @Override
    public void onSendFailed(final long token, final TransferEngineException error) {
        sendsFailed.put(token, error);
    }

    @Override
    public void onReceive(final long token, final int length) {
        receives.put(token, length);
    }

    @Override
    public void onImm(final int imm) {
        imms.add(imm);
    }

    @Override
    @SuppressWarnings("NonAtomicVolatileUpdate") // one writer: the polling thread of the domain under test
    public void onBytesReceived(final long bytes) {
        bytesReceived += bytes;
    }

    public int writesEnded() {
        return writesDone.size() + writesFailed.size();
    }

    public int sendsEnded() {
        return sendsDone.size() + sendsFailed.size();
    }

    public boolean writeEnded(final long token) {
        return writesDone.containsKey(token) || writesFailed.containsKey(token);
    }
}
