package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Writes to a stopped peer process (SIGSTOP) that the engine gave up on are withdrawn (Domain.cancel, as on a
 * timeout): on tcp;ofi_rxm the connection to the peer is reset, so what the provider still queued for it is reported
 * failed at once and never lands once the peer continues; a later write reaches the peer over a new connection.
 */
class FabricTimeoutResetTest {

    private static final long WRITE = 1L << 20;
    /** 64 MiB: far more than the sockets' buffers on both sides hold, so most of it waits in the provider. */
    private static final int WRITES = 64;

    private static final int STALLED_IMM = 2;
    private static final int FENCE_IMM = 3;

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();
    private @Nullable ChildJvm peer;

    @AfterEach
    void close() throws IOException, InterruptedException {
        if (peer != null) {
            signal(peer.process(), "CONT");
            peer.close();
        }
        fixture.close();
        arena.close();
    }

    @Test
    void cancelledWritesToAStoppedPeerAreDroppedWithItsConnectionAndNeverLand() throws Exception {
        FabricFixture.assumeAvailable("tcp");
        final ChildJvm child =
                ChildJvm.start(FabricFixture.childJvm(FabricPeerProcess.class, "tcp", Long.toString(WRITE)));
        peer = child;
        final Process process = child.process();
        final String[] ready = child.awaitLine("READY ").split(" ", -1);
        final NetworkAddress remote = NetworkAddress.parse(ready[1]);
        final long remoteBase = Long.parseLong(ready[2]);
        final long rkey = Long.parseLong(ready[3]);

        final RecordingDomainListener events = new RecordingDomainListener();
        final FabricDomain domain = (FabricDomain) fixture.open("tcp", 0, events);
        Assumptions.assumeTrue(
                domain.resetsConnections(),
                "libfabric 2.x: a reset would kill the peer (SIGSEGV in rxm_handle_comp_error; see"
                        + " FabricDomain.resetsConnections)");
        final MemorySegment src = arena.allocate(WRITE, 4096);
        final long srcKey = domain.register(src, Device.host());
        final long handle = domain.resolve(remote);
        write(domain, -1, handle, srcKey, src, remoteBase, rkey, 1);
        fixture.pollUntil(() -> events.ended(-1));
        assertThat(events.completed).as("connected and working").containsKey(-1L);

        signal(process, "STOP");
        for (int i = 0; i < WRITES; i++) {
            write(domain, i, handle, srcKey, src, remoteBase, rkey, STALLED_IMM);
        }
        for (int i = 0; i < 1000; i++) {
            domain.poll();
        }
        int cancelled = 0;
        for (int i = 0; i < WRITES; i++) {
            if (!events.ended(i)) {
                domain.cancel(i); // what the engine does when a write times out
                cancelled++;
            }
        }
        assertThat(cancelled).as("writes still outstanding at the stopped peer").isPositive();
        // the reset hands back every piece the provider held, while the peer is still stopped
        fixture.pollUntil(() -> domain.outstanding() == 0);
        assertThat(events.failed.values()).allSatisfy(error -> assertThat(error)
                .isInstanceOf(PeerUnreachableException.class)
                .hasMessageContaining("reset"));

        signal(process, "CONT");
        write(domain, -2, handle, srcKey, src, remoteBase, rkey, FENCE_IMM);
        fixture.pollUntil(() -> events.ended(-2));
        assertThat(events.completed).as("a new connection serves the peer").containsKey(-2L);
        child.println("IMMS " + STALLED_IMM + " " + FENCE_IMM);
        final long landed = Long.parseLong(child.awaitLine("IMMS ").split(" ", -1)[1]);
        // only what the sockets' buffers held may land: most of the 64 MiB was still queued in the provider
        assertThat(landed).as("stalled writes that landed at the peer").isLessThan(WRITES);
    }

    private static void write(
            final Domain domain,
            final long token,
            final long handle,
            final long srcKey,
            final MemorySegment src,
            final long remoteBase,
            final long rkey,
            final int imm) {
        domain.write(new WriteDescriptor()
                .token(token)
                .source(src, 0, srcKey, WRITE)
                .target(handle, remoteBase, 0, rkey)
                .imm(true, imm));
    }

    private static void signal(final Process process, final String name) throws IOException, InterruptedException {
        final Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
                .redirectErrorStream(true)
                .start();
        assertThat(kill.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
}
