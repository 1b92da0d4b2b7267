package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * A killed shm peer stalls the endpoint that had writes queued to it (libfabric 2.1 answers an endpoint's
 * operations in posting order); the domain replaces its endpoint under the same address, and peers that knew the
 * old one reach the new one (FabricDomain, "A gone shm peer"; issue 21, item 4).
 */
class FabricShmEndpointReplacementTest {

    private static final long REGION = 1L << 20;
    private static final long WRITE = 64 << 10;
    private static final int DOOMED_WRITES = 32;
    private static final long FIRST_DOOMED = 1000;
    private static final int BUFFER = 4096;
    private static final long BYSTANDER = 2000;

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();
    private final List<ChildJvm> children = new ArrayList<>();
    private final EndCountingListener events = new EndCountingListener();
    /** The write that {@link #killPeerWithWritesQueuedAndCancel} cancelled. */
    private long cancelled;

    @AfterEach
    void close() {
        children.forEach(ChildJvm::close);
        fixture.close();
        arena.close();
    }

    /** A peer process: its address and registered region. */
    private record Peer(ChildJvm jvm, NetworkAddress address, long base, long rkey) {}

    /** This process's domain: its source and target regions. */
    private record Local(Domain domain, MemorySegment src, long srcKey, MemorySegment dst, long dstKey) {}

    @Test
    void aPeerThatKnewTheOldEndpointReachesTheNewOneAndReceiveBuffersComeBackOnce() throws Exception {
        FabricFixture.assumeAvailable("shm");
        final Peer survivor = startPeer();
        final Local local = open();
        final Domain domain = local.domain();
        domain.postReceive(100, arena.allocate(BUFFER, 64));
        domain.postReceive(101, arena.allocate(BUFFER, 64));
        write(local, survivor, 1, 1);
        assertThat(ask(
                        survivor,
                        "WRITE 1 " + domain.address() + " " + local.dst().address() + " " + local.dstKey() + " "
                                + BUFFER + " 41"))
                .isEqualTo("ENDED 1 ok");

        killPeerWithWritesQueuedAndCancel(local, null);

        assertThat(ask(
                        survivor,
                        "WRITE 2 " + domain.address() + " " + local.dst().address() + " " + local.dstKey() + " "
                                + BUFFER + " 42"))
                .as("a peer that wrote to the old endpoint writes to the new one under the same address")
                .isEqualTo("ENDED 2 ok");
        fixture.pollUntil(() -> events.imms.contains(42));
        assertThat(ask(survivor, "SEND 3 " + domain.address() + " 100")).isEqualTo("ENDED 3 ok");
        fixture.pollUntil(() -> events.receives.size() == 1);
        final long received = events.receives.keySet().iterator().next();
        final long other = received == 100 ? 101 : 100;
        domain.withdrawReceive(other);
        fixture.pollUntil(() -> events.withdrawn.containsKey(other));
        write(local, survivor, 4, 4);

        assertThat(events.receives).containsExactly(Map.entry(received, 100));
        assertThat(events.ends)
                .as("every operation and receive buffer ended exactly once")
                .allSatisfy((token, count) ->
                        assertThat(count).as("token %d", token).isEqualTo(1));
        assertThat(domain.failure()).isNull();
    }

    /**
     * A peer that the old endpoint wrote to and that posts nothing itself maps the new endpoint when it announces
     * itself: libfabric 2.1 does so only for a region whose pid changed, which the replacement clears
     * ({@link FabricShmRegion}).
     */
    @Test
    void aPassivePeerThatTheOldEndpointWroteToIsWrittenToAgain() throws Exception {
        FabricFixture.assumeAvailable("shm");
        final Peer survivor = startPeer();
        final Local local = open();
        write(local, survivor, 1, 1);

        killPeerWithWritesQueuedAndCancel(local, null);

        write(local, survivor, 2, 2);
        assertThat(events.ends).allSatisfy((token, count) -> assertThat(count).isEqualTo(1));
        assertThat(local.domain().failure()).isNull();
    }

    /**
     * The write cancelled is another peer's, stuck behind the killed peer's writes in the endpoint's one response
     * queue: its cancel still finds the gone peer, and the other peer is written to again.
     */
    @Test
    void aCancelOfAWriteStuckBehindAKilledPeerReplacesTheEndpoint() throws Exception {
        FabricFixture.assumeAvailable("shm");
        final Peer bystander = startPeer();
        final Local local = open();
        write(local, bystander, 1, 1);

        killPeerWithWritesQueuedAndCancel(local, bystander);

        write(local, bystander, 2, 2);
        assertThat(events.ends).allSatisfy((token, count) -> assertThat(count).isEqualTo(1));
        assertThat(local.domain().failure()).isNull();
    }

    private Local open() {
        final Domain domain = fixture.open("shm", 0, events);
        final MemorySegment src = arena.allocate(REGION, 4096);
        final MemorySegment dst = arena.allocate(REGION, 4096);
        return new Local(domain, src, domain.register(src, Device.host()), dst, domain.register(dst, Device.host()));
    }

    /**
     * Starts a peer, stops it, queues writes to it (then one to {@code bystander}, if any), kills it and cancels one
     * write (as the engine does when it times out): the first doomed one, or the bystander's, stuck behind them. The
     * domain replaces its endpoint. Every doomed write but the cancelled one (which the engine reports; the domain
     * may or may not) ended once, those that did not complete with {@link PeerUnreachableException}.
     */
    private void killPeerWithWritesQueuedAndCancel(final Local local, final @Nullable Peer bystander) throws Exception {
        final Peer doomed = startPeer();
        write(local, doomed, FIRST_DOOMED - 1, 0); // connected and working
        signal("-STOP", doomed.jvm().process());
        for (int i = 0; i < DOOMED_WRITES; i++) {
            local.domain()
                    .write(new WriteDescriptor()
                            .token(FIRST_DOOMED + i)
                            .source(local.src(), 0, local.srcKey(), WRITE)
                            .target(local.domain().resolve(doomed.address()), doomed.base(), 0, doomed.rkey())
                            .imm(true, i));
        }
        cancelled = FIRST_DOOMED;
        if (bystander != null) {
            cancelled = BYSTANDER;
            local.domain()
                    .write(new WriteDescriptor()
                            .token(BYSTANDER)
                            .source(local.src(), 0, local.srcKey(), WRITE)
                            .target(local.domain().resolve(bystander.address()), bystander.base(), 0, bystander.rkey())
                            .imm(true, 0));
        }
        for (int i = 0; i < 100; i++) {
            fixture.pollAll();
        }
        doomed.jvm().process().destroyForcibly();
        assertThat(doomed.jvm().process().waitFor(30, TimeUnit.SECONDS)).isTrue();
        local.domain().cancel(cancelled);
        assertThatCode(() -> fixture.pollUntil(() -> notEnded().isEmpty()))
                .as(() ->
                        "writes queued to the killed peer that never ended: " + notEnded() + ", ended: " + events.ends)
                .doesNotThrowAnyException();
        final List<TransferEngineException> failures = new ArrayList<>();
        for (int i = 0; i < DOOMED_WRITES; i++) {
            final @Nullable TransferEngineException failure = events.failed.get(FIRST_DOOMED + i);
            if (failure != null) {
                failures.add(failure);
            }
        }
        // how many writes the stopped peer took before it was killed is timing: each outcome is asserted
        assertThat(failures).allSatisfy(e -> assertThat(e).isInstanceOf(PeerUnreachableException.class));
        assertThat(local.domain().failure()).as("the NIC lives on").isNull();
    }

    /** The doomed writes but the cancelled one that have not ended yet. */
    private List<Long> notEnded() {
        final List<Long> open = new ArrayList<>();
        for (int i = 0; i < DOOMED_WRITES; i++) {
            if (FIRST_DOOMED + i != cancelled && !events.ended(FIRST_DOOMED + i)) {
                open.add(FIRST_DOOMED + i);
            }
        }
        return open;
    }

    private void write(final Local local, final Peer peer, final long token, final int imm) {
        local.domain()
                .write(new WriteDescriptor()
                        .token(token)
                        .source(local.src(), 0, local.srcKey(), BUFFER)
                        .target(local.domain().resolve(peer.address()), peer.base(), 0, peer.rkey())
                        .imm(true, imm));
        fixture.pollUntil(() -> events.ended(token));
        assertThat(events.failed).doesNotContainKey(token);
    }

    private Peer startPeer() throws IOException, InterruptedException {
        final ChildJvm child =
                ChildJvm.start(FabricFixture.childJvm(FabricPeerProcess.class, "shm", Long.toString(REGION)));
        children.add(child);
        final String[] ready = child.awaitLine("READY ").split(" ", -1);
        return new Peer(child, NetworkAddress.parse(ready[1]), Long.parseLong(ready[2]), Long.parseLong(ready[3]));
    }

    /** Sends {@code command} to the peer and returns its answer, polling this process's domains meanwhile. */
    private String ask(final Peer peer, final String command) {
        peer.jvm().println(command);
        final CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> {
            try {
                return peer.jvm().awaitLine("ENDED ");
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
        fixture.pollUntil(answer::isDone);
        return answer.join();
    }

    private static void signal(final String signal, final Process process) throws Exception {
        assertThat(new ProcessBuilder("kill", signal, Long.toString(process.pid()))
                        .start()
                        .waitFor())
                .isZero();
    }
}
