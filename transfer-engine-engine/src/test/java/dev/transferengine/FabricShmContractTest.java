package dev.transferengine;

import dev.transferengine.transport.fabric.FabricTestAccess;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/** The transport contract on libfabric provider shm with up to 4 NICs per group. */
class FabricShmContractTest extends TransportContract {

    @BeforeAll
    static void needsTheProvider() {
        FabricTestAccess.assumeAvailable("shm");
    }

    @Override
    protected TransferEngineBuilder configure(final TransferEngineBuilder builder) {
        return builder.transport("fabric").option("fabric.provider", "shm").bindAddress("127.0.0.1");
    }

    @Override
    protected int maxNics() {
        return 4;
    }

    // ---- gaps of the libfabric transport, each disabled with its reason (see the fabric package notes) ----------

    @Test
    @Disabled("libfabric RDM providers queue a message that finds no posted receive until one is posted; the fabric "
        + "transport has no receiver-side refusal (NO_RECEIVE_BUFFER) yet")
    @Override
    void aFullReceivePoolRefusesTheSendAndBuffersReturnWhenTheListenerReturns() {
    }

    @Test
    @Disabled("libfabric RDM providers queue a message that finds no posted receive until one is posted; the fabric "
        + "transport has no receiver-side refusal (NO_RECEIVE_BUFFER) yet")
    @Override
    void aCreditedPoolPostsOneBufferPerCredit() {
    }

    @Test
    @Disabled("an oversized message fails at the receiver (FI_ETRUNC, buffer dropped) but completes at the sender; "
        + "no refusal travels back on libfabric RDM")
    @Override
    void oversizedSendIsRefusedByTheReceiver() {
    }

    @Test
    @Disabled("a one-sided write without imm raises no completion at the target on libfabric, so the receiver "
        + "cannot count BYTES_RECEIVED for it")
    @Override
    void describesItsNicsAndPeers() {
    }

    @Test
    @Disabled("libfabric 1.17 shm neither completes nor fails a write its target refuses (\"error processing "
        + "command\"); it ends by the operation timeout, not RemoteAccessException")
    @Override
    void remoteOutOfBoundsWriteIsRefusedByTheReceiverAndLeavesItsMemoryUntouched() {
    }

    @Test
    @Disabled("libfabric 1.17 shm neither completes nor fails a write its target refuses (\"error processing "
        + "command\"); it ends by the operation timeout, not RemoteAccessException")
    @Override
    void staleKeyAfterDeregistrationIsRefusedAndLeavesMemoryUntouched() {
    }
}
