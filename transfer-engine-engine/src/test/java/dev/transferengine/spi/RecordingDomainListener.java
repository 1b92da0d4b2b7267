package dev.transferengine.spi;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.TransferEngineException;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.jspecify.annotations.Nullable;

/**
 * Records what a domain reports, in arrival order, for the transports' domain-level tests. Safe to read from
 * another thread than the one polling the domain. Grants every imm reservation: the reservation is the imm itself.
 */
public class RecordingDomainListener implements DomainListener {

    public final Map<Long, Long> completed = Collections.synchronizedMap(new LinkedHashMap<>());
    public final Map<Long, TransferEngineException> failed = Collections.synchronizedMap(new LinkedHashMap<>());
    public final Map<Long, Integer> receives = Collections.synchronizedMap(new LinkedHashMap<>());
    public final List<Integer> imms = new CopyOnWriteArrayList<>();
    /** Imms whose reservation was given back: their writes never landed. */
    public final List<Integer> releasedImms = new CopyOnWriteArrayList<>();

    public volatile long bytesReceived;

    @Override
    public void onComplete(final long token, final long bytes) {
        completed.put(token, bytes);
    }

    @Override
    public void onFailed(final long token, final TransferEngineException error) {
        failed.put(token, error);
    }

    @Override
    public void onReceive(final long token, final int length) {
        receives.put(token, length);
    }

    @Override
    public long reserveImm(final @Nullable NetworkAddress peer, final int imm) {
        return imm & 0xFFFF_FFFFL;
    }

    @Override
    public void onImm(final long reservation) {
        imms.add((int) reservation);
    }

    @Override
    public void releaseImm(final long reservation) {
        releasedImms.add((int) reservation);
    }

    @Override
    @SuppressWarnings("NonAtomicVolatileUpdate") // one writer: the polling thread of the domain under test
    public void onBytesReceived(final long bytes) {
        bytesReceived += bytes;
    }

    /** Operations reported complete or failed. */
    public int ended() {
        return completed.size() + failed.size();
    }

    public boolean ended(final long token) {
        return completed.containsKey(token) || failed.containsKey(token);
    }
}
