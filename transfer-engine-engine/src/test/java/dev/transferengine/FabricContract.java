package dev.transferengine;

import dev.transferengine.transport.fabric.FabricTestAccess;

/**
 * The transport contract on one libfabric provider, with how libfabric RDM differs from the tcp transport declared
 * here and checked by the contract's tests.
 */
abstract class FabricContract extends TransportContract {

    /** The libfabric provider, e.g. {@code tcp} or {@code shm}. */
    protected abstract String provider();

    @Override
    protected TransferEngineBuilder configure(final TransferEngineBuilder builder) {
        FabricTestAccess.assumeAvailable(provider());
        builder.transport("fabric").option("fabric.provider", provider()).bindAddress("127.0.0.1");
        for (final String option : FabricTestAccess.libraryOptions()) {
            final String[] kv = option.split("=", 2);
            builder.option(kv[0], kv[1]);
        }
        return builder;
    }

    /** RDM providers queue a message that finds no posted receive until one is posted. */
    @Override
    protected boolean refusesSendsWithoutBuffer() {
        return false;
    }

    /**
     * A known gap: untagged RDM receives match the first posted buffer whatever its size, so a message can land in
     * a smaller buffer of another pool and be truncated there (FI_ETRUNC at the receiver, success at the sender).
     */
    @Override
    protected boolean sendsFindABufferThatFits() {
        return false;
    }

    /** A write without imm raises no completion at the target (and tcp;ofi_rxm reports no length even with one). */
    @Override
    protected boolean countsReceivedBytesOfEveryWrite() {
        return false;
    }

    /**
     * A known gap, see the README: no refusal travels back on libfabric RDM; an oversized message is dropped at the
     * receiver (FI_ETRUNC) and completes at the sender.
     */
    @Override
    protected boolean refusesOversizedSends() {
        return false;
    }
}
