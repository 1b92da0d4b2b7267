package dev.transferengine;

import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.transport.fabric.FabricTestAccess;

/** The transport contract on libfabric provider shm with up to 4 NICs per group. */
class FabricShmContractTest extends FabricContract {

    @Override
    protected String provider() {
        return "shm";
    }

    /** Untagged before libfabric 1.19: no control message can be kept apart from the user's messages. */
    @Override
    protected boolean deliversNegativeAcknowledgements() {
        return FabricTestAccess.tagged(provider());
    }

    /** A refused delivery-complete write leaves shm's endpoint stuck toward the peer (issue 21, item 4). */
    @Override
    protected boolean takesMessagesAfterARefusedWrite() {
        return false;
    }

    /** shm reports a zero-byte imm write to a stale key as done (issue 21, item 4). */
    @Override
    protected boolean failsStaleKeyZeroByteWrites() {
        return false;
    }

    /** libfabric 1.17 shm neither completes nor fails a write its target refuses: it ends by the operation timeout. */
    @Override
    protected Class<? extends TransferEngineException> remoteRefusal() {
        return TransferTimeoutException.class;
    }
}
