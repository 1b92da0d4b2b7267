package dev.transferengine.transport.fabric;

import dev.transferengine.TransferEngineException;
import dev.transferengine.spi.RecordingDomainListener;

/** Counts write completions, failures and imms without allocating, for the domain-level benchmarks. */
final class CountingDomainListener extends RecordingDomainListener {
    long done;
    long failed;
    long immCount;

    @Override
    public void onWriteComplete(final long token, final long bytes) {
        done++;
    }

    @Override
    public void onWriteFailed(final long token, final TransferEngineException error) {
        done++;
        failed++;
    }

    @Override
    public void onImm(final int imm) {
        immCount++;
    }
}
