package dev.transferengine;

import dev.transferengine.transport.fabric.FabricTestAccess;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/** Two JVM processes on libfabric's shm provider: regions of another process, a killed peer's region left behind. */
class FabricShmMultiProcessTest extends FabricMultiProcessTest {

    @Override
    protected String provider() {
        return "shm";
    }

    /**
     * On libfabric 1.17 the peer process died once in two runs of this class with SIGSEGV (a NULL dereference,
     * address 0x4) inside shm's progress, right after the contract suites had opened some 90 endpoints in the
     * test JVM; the first run, alone in its JVM, passed. Untested on 1.18-1.22; 2.1 runs it.
     */
    @BeforeEach
    void needsLibfabricTwo() {
        final String version = FabricTestAccess.libraryVersion();
        Assumptions.assumeFalse(
                version.startsWith("1."),
                () -> "fabric/shm across processes is tested on" + " libfabric 2.x only: on " + version
                        + " a peer process crashed (SIGSEGV in shm progress)");
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
     * seen in pthread_spin_lock, the JVM unable to reach a safepoint). 2.1 fails the writes in flight by the
     * operation timeout, but the endpoint then posts nothing to a new peer within 30 s (most likely its
     * transmit resources stay held by the dead one). Neither is the engine's to repair, so the test would only hang or fail here.
     */
    @Override
    protected @Nullable String killedPeerLimitation() {
        return "libfabric shm does not survive a killed peer process: 1.17 deadlocks on the dead peer's region"
                + " spinlock; 2.1 times the writes out but then serves no new peer (see FabricShmMultiProcessTest)";
    }
}
