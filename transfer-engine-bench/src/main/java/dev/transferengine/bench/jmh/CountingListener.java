package dev.transferengine.bench.jmh;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainListener;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Counts what a domain reports, without allocating: a failure counts as done too (so that a window never stalls) and
 * is counted apart, for the trial's tear-down to fail on. Worker (benchmark) thread only, like the domain.
 */
final class CountingListener implements DomainListener {

    /** Writes and sends ended, failed ones included. */
    long done;

    long failed;
    long imms;
    long bytesReceived;

    @Override
    public void onComplete(final long token, final long bytes) {
        done++;
    }

    @Override
    public void onFailed(final long token, final TransferEngineException error) {
        done++;
        failed++;
    }

    @Override
    public void onReceive(final long token, final int length) {
        // the benchmarks post no receives
    }

    @Override
    public long reserveImm(final @Nullable NetworkAddress peer, final int imm) {
        return imm & 0xFFFF_FFFFL; // every imm is welcome; the reservation is the imm itself
    }

    @Override
    public void onImm(final long reservation) {
        imms++;
    }

    @Override
    public void releaseImm(final long reservation) {
        // nothing is held per reservation
    }

    @Override
    public void onBytesReceived(final long length) {
        bytesReceived += length;
    }

    /** Polls until {@code done} reaches {@code posted}, failing after 30 s so that a lost completion ends the run. */
    void drain(final long posted, final Domain... domains) {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (done < posted) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(
                        (posted - done) + " of " + posted + " writes still in flight after 30 s");
            }
            for (final Domain domain : domains) {
                domain.poll();
            }
        }
        if (failed > 0) {
            throw new IllegalStateException(failed + " of " + posted + " writes failed");
        }
    }
}
