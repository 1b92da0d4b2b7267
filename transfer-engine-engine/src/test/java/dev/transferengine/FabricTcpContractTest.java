package dev.transferengine;

import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;

/** The transport contract on libfabric provider tcp;ofi_rxm with up to 4 NICs per group. */
class FabricTcpContractTest extends FabricContract {

    @Override
    protected String provider() {
        return "tcp";
    }

    /**
     * tcp;ofi_rxm retries a refused connection every ~2 s and reports it only on its internal EQ, so a write to a
     * closed peer ends by the operation timeout.
     */
    @Override
    protected Class<? extends TransferEngineException> unreachablePeerFailure() {
        return TransferTimeoutException.class;
    }
}
