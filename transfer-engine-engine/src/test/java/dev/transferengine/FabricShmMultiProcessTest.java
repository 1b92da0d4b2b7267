package dev.transferengine;

import dev.transferengine.transport.fabric.FabricTestAccess;

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

    /**
     * libfabric 2.1's shm completes an endpoint's delivery-complete and CMA operations in posting order from one
     * response queue for all its peers, so the writes queued to a killed peer stall every later one; the engine
     * replaces that endpoint under the same address when it sees it (FabricDomain, "A gone shm peer") and serves
     * the survivors. 1.17 is not survived: it guards each region with a process-shared spinlock in the region
     * itself, and a peer killed while holding it (its worker polls all the time) leaves it held, so the next post or
     * progress call that touches the region spins forever inside libfabric (the worker was seen in
     * pthread_spin_lock, the JVM unable to reach a safepoint), before any timeout could act.
     */
    @Override
    protected @Nullable String killedPeerLimitation() {
        final String version = FabricTestAccess.libraryVersion();
        return version.startsWith("1.")
                ? "known defect 'a killed shm peer hangs' on libfabric " + version + " (docs/delivery-contract.md,"
                        + " known defects; issue 21 item 4): 1.17 deadlocks on the dead peer's region spinlock inside"
                        + " libfabric; use libfabric 2.1 or later"
                : null;
    }

    /** shm moves bytes through shared memory and the peer's address space, never through a network. */
    @Override
    protected @Nullable String partitionLimitation() {
        return "shm crosses no network: processes of one host reach each other through shared memory, which no"
                + " partition cuts (a stopped peer is its nearest fault: see the SIGSTOP case)";
    }
}
