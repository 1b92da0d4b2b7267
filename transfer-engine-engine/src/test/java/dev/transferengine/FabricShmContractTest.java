package dev.transferengine;

import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;

/** The transport contract on libfabric provider shm with up to 4 NICs per group. */
class FabricShmContractTest extends FabricContract {

    @Override
    protected String provider() {
        return "shm";
    }

    /**
     * A refused delivery-complete write leaves shm's endpoint stuck toward the peer (issue 21, item 4): shm moves a
     * delivery-complete write of at most 4 KiB by SAR and turns away every other operation to that peer while one is
     * in flight; 2.1's target drops a command whose key it cannot verify without answering it, so that SAR never
     * ends (smr_progress_cmd_rma), and the negative acknowledgement behind it never leaves.
     */
    @Override
    protected boolean takesMessagesAfterARefusedWrite() {
        return false;
    }

    /** shm reports a zero-byte imm write to a stale key as done (issue 21, item 4). */
    @Override
    protected boolean failsStaleKeyZeroByteWrites() {
        return false;
    }

    /** shm neither completes nor fails a write its target refuses: it ends by the operation timeout. */
    @Override
    protected Class<? extends TransferEngineException> remoteRefusal() {
        return TransferTimeoutException.class;
    }
}
