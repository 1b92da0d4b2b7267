package dev.transferengine;

import dev.transferengine.test.TransportContract;
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
        return FabricTestAccess.onLoopback(builder, provider());
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
     * The contract's receiver never addresses its writers, so no provider names them (shm names only writers in the
     * receiver's AV, tcp;ofi_rxm none), and a refused imm is not reported to its writer: FabricImmSharesTest covers
     * fabric/shm (issue 16 item 3).
     */
    @Override
    protected boolean attributesImmsToPeers() {
        return false;
    }

    /** A provider refuses an RMA its registration's access flags rule out like any bad key: no reason travels back. */
    @Override
    protected boolean namesAccessRefusals() {
        return false;
    }
}
