package dev.transferengine;

/** The transport contract on libfabric provider shm with one NIC per group. */
class FabricShmSingleNicContractTest extends FabricShmContractTest {

    @Override
    protected int maxNics() {
        return 1;
    }
}
