package dev.transferengine.transport.tcp;

import dev.transferengine.TransferEngineException;
import dev.transferengine.spi.DomainListener;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Records what a domain reports; used from the test thread only, which also drives the domains. */
final class RecordingListener implements DomainListener {

    final Map<Long, Long> writesDone = new LinkedHashMap<>();
    final Map<Long, TransferEngineException> writesFailed = new LinkedHashMap<>();
    final Map<Long, Long> sendsDone = new LinkedHashMap<>();
    final Map<Long, TransferEngineException> sendsFailed = new LinkedHashMap<>();
    final Map<Long, Integer> receives = new LinkedHashMap<>();
    final List<Integer> imms = new ArrayList<>();
    long bytesReceived;

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
    public void onBytesReceived(final long bytes) {
        bytesReceived += bytes;
    }

    int writesEnded() {
        return writesDone.size() + writesFailed.size();
    }

    int sendsEnded() {
        return sendsDone.size() + sendsFailed.size();
    }
}
