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

    /**
     * libfabric shm does not survive a peer process that is killed. 1.17 guards each region with a process-shared
     * spinlock in the region itself: a peer killed while holding it (its worker polls all the time) leaves it held,
     * and the next post or progress call that touches the region spins forever inside libfabric (the worker was
     * seen in pthread_spin_lock, the JVM unable to reach a safepoint). 2.1 completes an endpoint's delivery-complete
     * and CMA operations in posting order from one response queue for all its peers (smr_progress_resp stops at the
     * first unanswered entry): the writes queued to the dead peer are never answered, so no later write to any peer
     * completes, and only closing the endpoint (which gives it a new address) clears that. The engine fails that NIC
     * at once when it sees it (FabricDomain.failIfBehindAGonePeer), so the survivor is refused rather than served;
     * neither is the engine's to repair.
     */
    @Override
    protected @Nullable String killedPeerLimitation() {
        return "known defect 'a killed shm peer hangs or stalls' (docs/delivery-contract.md, known defects; issue 21"
                + " item 4): 1.17 deadlocks on the dead peer's region spinlock; 2.1 times the writes out but then"
                + " completes nothing more (its in-order response queue waits for the dead peer's answers), so the engine"
                + " fails that NIC, naming the cause, and serves no new peer";
    }

    /** shm moves bytes through shared memory and the peer's address space, never through a network. */
    @Override
    protected @Nullable String partitionLimitation() {
        return "shm crosses no network: processes of one host reach each other through shared memory, which no"
                + " partition cuts (a stopped peer is its nearest fault: see the SIGSTOP case)";
    }
}
