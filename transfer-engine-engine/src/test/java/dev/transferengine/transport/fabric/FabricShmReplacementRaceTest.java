package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A peer whose post to our shm endpoint missed its replacement (FabricDomain, "A gone shm peer"; issue 21, item 4):
 * it checked our replacement count before we raised it and posted after we took what was queued to the old
 * endpoint, so nobody answers that post. A peer that is running cannot do that since it counts itself in at our
 * published keys from before that check until its post ({@code FabricDomain.postNow}); one stopped or descheduled
 * past the bounded wait ({@link FabricShmKeys#QUIESCE_NANOS}) still can. The test plays that peer deterministically
 * by setting our published count back while it posts, and checks the fallback: at its timeout the peer replaces its
 * own endpoint, the post fails typed, every operation ends once, no NIC fails and traffic flows both ways after.
 */
class FabricShmReplacementRaceTest {

    private static final long REGION = 1L << 20;
    private static final int BUFFER = 4096;
    private static final int DOOMED_WRITES = 4;
    private static final long FIRST_DOOMED = 1000;
    /** A read of the killed peer's region, stalled beside the doomed writes. */
    private static final long DOOMED_READ = 2000;

    private static final VarHandle LONG = JAVA_LONG.varHandle();

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();
    private final List<ChildJvm> children = new ArrayList<>();
    private final EndCountingListener events = new EndCountingListener();

    @AfterEach
    void close() {
        children.forEach(ChildJvm::close);
        fixture.close();
        arena.close();
    }

    /** A peer process: its address and registered region. */
    private record Peer(ChildJvm jvm, NetworkAddress address, long base, long rkey) {}

    @Test
    void aPeerWhosePostMissedOurReplacementReplacesItsOwnEndpointAndTrafficFlowsBothWaysAfter() throws Exception {
        FabricFixture.assumeAvailable("shm");
        final Peer peer = startPeer();
        final Domain domain = fixture.open("shm", 0, events);
        final MemorySegment src = arena.allocate(REGION, 4096);
        final MemorySegment dst = arena.allocate(REGION, 4096);
        final long srcKey = domain.register(src, Device.host());
        final long dstKey = domain.register(dst, Device.host());
        domain.postReceive(100, arena.allocate(BUFFER, 64));
        final String writeToUs = domain.address() + " " + dst.address() + " " + dstKey + " " + BUFFER;
        assertThat(ask(peer, "WRITE 1 " + writeToUs + " 41", "ENDED ")).isEqualTo("ENDED 1 ok");
        write(domain, src, srcKey, peer, 1);

        try (Arena mapping = Arena.ofConfined()) {
            final MemorySegment ourKeys = mapKeys(domain.address(), mapping);
            replaceBehindAKilledPeer(domain, src, srcKey);
            assertThat(domain.failure()).as("the NIC lives on").isNull();
            assertThat((long) LONG.getVolatile(ourKeys, FabricShmKeys.REPLACED_AT))
                    .as("our endpoint was replaced once")
                    .isEqualTo(1);

            LONG.getAndAdd(ourKeys, FabricShmKeys.REPLACED_AT, -1L); // the count the peer checked before the post
            peer.jvm().println("WRITE 2 " + writeToUs + " 42");
            pollFor(1_000); // its post went to the old endpoint, which nobody polls
            LONG.getAndAdd(ourKeys, FabricShmKeys.REPLACED_AT, 1L);
        }
        assertThat(events.imms).doesNotContain(42);
        assertThat(ask(peer, "CANCEL 2", "ENDED "))
                .as("the post nobody answers fails as behind a replaced peer, and the peer replaces its endpoint")
                .startsWith("ENDED 2 dev.transferengine.exceptions.PeerUnreachableException")
                .contains("was replaced");
        assertThat(ask(peer, "FAILURE", "FAILURE ")).as("the peer's NIC").isEqualTo("FAILURE none");

        assertThat(ask(peer, "WRITE 3 " + writeToUs + " 43", "ENDED ")).isEqualTo("ENDED 3 ok");
        fixture.pollUntil(() -> events.imms.contains(43));
        assertThat(ask(peer, "SEND 4 " + domain.address() + " 100", "ENDED ")).isEqualTo("ENDED 4 ok");
        fixture.pollUntil(() -> events.receives.containsKey(100L));
        write(domain, src, srcKey, peer, 5);
        assertThat(ask(peer, "IMMS 5 5", "IMMS "))
                .as("our write reached the peer's new endpoint")
                .isEqualTo("IMMS 0");

        assertThat(events.ends)
                .as("every operation and receive buffer here ended exactly once")
                .allSatisfy((token, count) ->
                        assertThat(count).as("token %d", token).isEqualTo(1));
        assertThat(domain.failure()).isNull();
    }

    /**
     * An endpoint that another endpoint of this process holds in its AV is reached through its own mapping, which a
     * replacement would unmap under the holder (FabricLocalEndpoints): behind a killed peer its NIC fails for good
     * instead, saying why, and what it held and whatever comes later fails with that reason.
     */
    @Test
    void anEndpointHeldByAnotherOfThisProcessFailsItsNicNamingWhyInsteadOfBeingReplaced() throws Exception {
        FabricFixture.assumeAvailable("shm");
        final Domain domain = fixture.open("shm", 0, events);
        final Domain holder = fixture.open("shm", 0, new RecordingDomainListener());
        holder.resolve(domain.address());
        final MemorySegment src = arena.allocate(REGION, 4096);
        final long srcKey = domain.register(src, Device.host());

        replaceBehindAKilledPeer(domain, src, srcKey);

        assertThat(domain.failure())
                .as("the NIC failed, naming why")
                .contains("an endpoint of this process holds this one in its AV, so it cannot be replaced")
                .contains("close the engine and build a new one");
        for (int i = 0; i < DOOMED_WRITES; i++) {
            assertThat(events.failed.get(FIRST_DOOMED + i))
                    .as("write %d", FIRST_DOOMED + i)
                    .isInstanceOf(TransferEngineException.class);
        }
        final Peer later = startPeer();
        domain.write(writeTo(later, domain, src, srcKey, 2, BUFFER));
        fixture.pollUntil(() -> events.ended(2));
        assertThat(events.failed.get(2L))
                .as("a later write fails at once with the NIC's reason")
                .isInstanceOf(TransferEngineException.class)
                .hasMessageContaining("cannot be replaced");
        assertThat(holder.failure()).as("the holder's NIC").isNull();
    }

    /**
     * Kills a peer this domain wrote to, then queues writes to it, which nobody takes, so they stall whatever the
     * protocol (a peer stopped instead, as before, had taken them all before it was killed in 1 of 3 runs), and gives
     * up on them (as the engine's timeout does): the domain replaces its endpoint (or, where it cannot, fails its NIC).
     */
    private void replaceBehindAKilledPeer(final Domain domain, final MemorySegment src, final long srcKey)
            throws Exception {
        final Peer doomed = startPeer();
        write(domain, src, srcKey, doomed, FIRST_DOOMED - 1);
        doomed.jvm().process().destroyForcibly();
        assertThat(doomed.jvm().process().waitFor(30, TimeUnit.SECONDS)).isTrue();
        for (int i = 0; i < DOOMED_WRITES; i++) {
            domain.write(writeTo(doomed, domain, src, srcKey, FIRST_DOOMED + i, BUFFER * 4));
        }
        domain.read(new WriteDescriptor()
                .token(DOOMED_READ)
                .source(src, 0, srcKey, BUFFER)
                .target(domain.resolve(doomed.address()), doomed.base(), 0, doomed.rkey()));
        pollFor(100);
        for (int i = 0; i < DOOMED_WRITES; i++) {
            domain.cancel(FIRST_DOOMED + i);
        }
        domain.cancel(DOOMED_READ);
        fixture.pollAll();
        // a read the replacement (or the NIC's failure) took is reported failed too, not only released
        fixture.pollUntil(() -> events.ended(DOOMED_READ));
        assertThat(events.failed.get(DOOMED_READ)).as("the doomed read").isInstanceOf(TransferEngineException.class);
        for (int i = 0; i < DOOMED_WRITES; i++) {
            assertThat(events.ends.getOrDefault(FIRST_DOOMED + i, 1))
                    .as("write %d ended at most once", FIRST_DOOMED + i)
                    .isEqualTo(1);
        }
    }

    /** Maps the keys table that {@code address}'s endpoint publishes, as its peers do. */
    private static MemorySegment mapKeys(final NetworkAddress address, final Arena arena) throws IOException {
        try (FileChannel channel = FileChannel.open(
                FabricShmKeys.pathOf(FabricAddress.endpointName(address, "shm")),
                StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, FabricShmKeys.REPLACED_AT + 8, arena);
        }
    }

    private WriteDescriptor writeTo(
            final Peer peer,
            final Domain domain,
            final MemorySegment src,
            final long srcKey,
            final long token,
            final long length) {
        return new WriteDescriptor()
                .token(token)
                .source(src, 0, srcKey, length)
                .target(domain.resolve(peer.address()), peer.base(), 0, peer.rkey())
                .imm(true, (int) token);
    }

    private void write(
            final Domain domain, final MemorySegment src, final long srcKey, final Peer peer, final long token) {
        domain.write(writeTo(peer, domain, src, srcKey, token, BUFFER));
        fixture.pollUntil(() -> events.ended(token));
        assertThat(events.failed).doesNotContainKey(token);
    }

    /** Polls this process's domains for about {@code millis}. */
    private void pollFor(final long millis) {
        final long until = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() - until < 0) {
            fixture.pollAll();
        }
    }

    private Peer startPeer() throws IOException, InterruptedException {
        final ChildJvm child =
                ChildJvm.start(FabricFixture.childJvm(FabricPeerProcess.class, "shm", Long.toString(REGION)));
        children.add(child);
        final String[] ready = child.awaitLine("READY ").split(" ", -1);
        return new Peer(child, NetworkAddress.parse(ready[1]), Long.parseLong(ready[2]), Long.parseLong(ready[3]));
    }

    /**
     * Sends {@code command} to the peer and returns its next line starting with {@code answer}, polling this
     * process's domains meanwhile.
     */
    private String ask(final Peer peer, final String command, final String answer) {
        peer.jvm().println(command);
        final CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return peer.jvm().awaitLine(answer);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
        fixture.pollUntil(line::isDone);
        return line.join();
    }
}
