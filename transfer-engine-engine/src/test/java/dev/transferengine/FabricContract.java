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
        return builder.transport("fabric").option("fabric.provider", provider()).bindAddress("127.0.0.1");
    }

    /** RDM providers queue a message that finds no posted receive until one is posted. */
    @Override
    protected boolean refusesSendsWithoutBuffer() {
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
