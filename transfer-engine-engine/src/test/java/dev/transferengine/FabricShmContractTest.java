package dev.transferengine;

import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;

/** The transport contract on libfabric provider shm with up to 4 NICs per group. */
class FabricShmContractTest extends FabricContract {

    @Override
    protected String provider() {
        return "shm";
    }

    /** libfabric 1.17 shm neither completes nor fails a write its target refuses: it ends by the operation timeout. */
    @Override
    protected Class<? extends TransferEngineException> remoteRefusal() {
        return TransferTimeoutException.class;
    }
}
