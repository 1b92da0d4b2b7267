package dev.transferengine;

import org.jspecify.annotations.Nullable;

/** Two JVM processes on libfabric's shm provider: regions of another process, a killed peer's region left behind. */
class FabricShmMultiProcessTest extends FabricMultiProcessTest {

    @Override
    protected String provider() {
        return "shm";
    }

    /**
     * shm moves each delivery-complete write it cannot hand to CMA by SAR, one at a time per peer (2.1 took minutes
     * for 10,000 writes here): fewer writes keep the run short.
     */
    @Override
    protected int soakWrites() {
        return 2_000;
    }

    /** shm moves bytes through shared memory and the peer's address space, never through a network. */
    @Override
    protected @Nullable String partitionLimitation() {
        return "shm crosses no network: processes of one host reach each other through shared memory, which no"
                + " partition cuts (a stopped peer is its nearest fault: see the SIGSTOP case)";
    }
}
