package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.TransportEvent;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The fabric transport's control messages ({@link FabricControl}) attacked from outside: {@code
 * src/test/c/control_outsider.c} is a libfabric endpoint of its own, in a process of its own, that knows the
 * receiver's address (and a member's, to forge in its name) and no descriptor. Nothing it sends may end a waiter, change
 * what a member sends, or stop the domain serving; what it sends is counted ({@code control.refused}).
 */
class FabricControlOutsiderTest {

    private static final Path SOURCE = Path.of("src/test/c/control_outsider.c");

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private final FabricFixture fixture = new FabricFixture();
    private final List<Integer> abandoned = new CopyOnWriteArrayList<>();
    private final RecordingDomainListener receiverEvents = new RecordingDomainListener() {
        @Override
        public void onImmAbandoned(final NetworkAddress peer, final int imm, final int missing, final String cause) {
            abandoned.add(imm);
        }
    };
    private final RecordingDomainListener memberEvents = new RecordingDomainListener();

    @AfterEach
    void close() {
        fixture.close();
        arena.close();
    }

    /**
     * Abandonments of imms 5000 to 5019 in a member's name (the form without a key, then with guessed keys, then one
     * of them 50 times with one nonce) end nothing at the receiver: each is refused as unproven. A genuine one, naming
     * the key of the receiver's region the member wrote, is reported once. Before keyed abandonments, all 20 forged
     * imms were reported as abandoned by the member.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void forgedAbandonmentsInAMembersNameEndNoWaiter(final String provider) throws Exception {
        final Domain receiver = open(provider, receiverEvents);
        final Domain member = open(provider, memberEvents);
        final long peer = member.resolve(receiver.address());
        final long key = receiver.register(arena.allocate(4096, 64), Device.host());
        final Path outsider = CPrograms.compile(SOURCE, dir, "control_outsider");

        runOutsider(outsider, receiver, "nack", "20", "5000", member.address().toString());
        runOutsider(outsider, receiver, "nack", "20", "5000", member.address().toString(), "12345");
        runOutsider(outsider, receiver, "replay", "50", "5000", member.address().toString());
        member.abandonImm(peer, key, 7, 1, "a genuine failure");
        fixture.pollUntil(() -> abandoned.contains(7));
        fixture.pollUntil(() -> !member.abandonmentsPending()); // its receipt came back

        assertThat(abandoned).containsExactly(7);
        assertThat(refused(receiver, "unproven")).isEqualTo(90);
    }

    /**
     * Pool-size answers in the receiver's name (one pool of 1 byte, or none, at the highest versions) sent to a member
     * before its first send change nothing it sends: its 1 KiB message reaches the receiver's 4 KiB buffer. Before
     * answers echoed the question's nonce, the member took the forged sizes for good and refused the send
     * ({@code NO_RECEIVE_BUFFER}).
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void forgedPoolSizesChangeNothingAMemberSends(final String provider) throws Exception {
        final Domain receiver = open(provider, receiverEvents);
        final Domain member = open(provider, memberEvents);
        final Path outsider = CPrograms.compile(SOURCE, dir, "control_outsider");
        final MemorySegment buffer = arena.allocate(4096, 64);
        receiver.postReceive(1, buffer);

        runOutsider(outsider, member, "sizes", "8", receiver.address().toString());
        final MemorySegment message = arena.allocate(1024, 64);
        member.send(2, member.resolve(receiver.address()), message);
        fixture.pollUntil(() -> memberEvents.ended(2) && receiverEvents.receives.containsKey(1L));

        assertThat(memberEvents.failed.get(2L)).as("the member's send").isNull();
        assertThat(memberEvents.failed.values()).noneMatch(RemoteAccessException.class::isInstance);
        assertThat(receiverEvents.receives).containsEntry(1L, 1024);
        assertThat(refused(member, "unasked")).isEqualTo(8);
    }

    /**
     * Random bytes, messages cut short or too long behind each magic, receipts of random nonces and questions in the
     * names of 300 addresses nobody listens on: the receiver refuses and counts them, and then still reports a
     * member's genuine abandonment and takes its write.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void garbageAndStrangersQuestionsLeaveTheDomainServing(final String provider) throws Exception {
        final Domain receiver = open(provider, receiverEvents);
        final Domain member = open(provider, memberEvents);
        final long peer = member.resolve(receiver.address());
        final MemorySegment target = arena.allocate(4096, 64);
        final long key = receiver.register(target, Device.host());
        final Path outsider = CPrograms.compile(SOURCE, dir, "control_outsider");

        runOutsider(outsider, receiver, "garbage", "2000");
        runOutsider(outsider, receiver, "receipt", "500");
        runOutsider(outsider, receiver, "query", "300");
        member.abandonImm(peer, key, 9, 1, "a genuine failure");
        fixture.pollUntil(() -> abandoned.contains(9));

        assertThat(abandoned).containsExactly(9);
        assertThat(refused(receiver, "malformed")).isPositive();
        // the member and the strangers it answered; on shm few enough to leave its map's 256 slots to real peers
        assertThat(receiver.peers().size())
                .isLessThanOrEqualTo(
                        (provider.equals("shm") ? FabricDomain.SHM_MAX_ASKERS : FabricDomain.MAX_ASKERS) + 1);
    }

    private Domain open(final String provider, final RecordingDomainListener listener) {
        FabricFixture.assumeAvailable(provider);
        final String library = FabricFixture.library();
        assumeTrue(
                !provider.equals("shm")
                        || (library != null && FabricLibrary.open(library).version() >= FabricLibrary.version(1, 19)),
                "shm carries control messages from libfabric 1.19 (tagged sends)");
        return fixture.open(provider, 0, listener);
    }

    /** Runs the outsider against {@code victim} while this test polls every domain, until it exits. */
    private void runOutsider(final Path outsider, final Domain victim, final String... args)
            throws IOException, InterruptedException {
        final List<String> command = new java.util.ArrayList<>(
                List.of(outsider.toString(), victim.address().toString()));
        command.addAll(List.of(args));
        final Path output = dir.resolve("outsider.out");
        final Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        try {
            fixture.pollUntil(() -> !process.isAlive());
        } finally {
            process.destroyForcibly();
        }
        assertThat(process.waitFor())
                .as("outsider %s: %s", args[0], Files.readString(output))
                .isZero();
        fixture.pollUntil(() -> true); // what it sent last is taken in
    }

    private static long refused(final Domain domain, final String reason) {
        return domain.events().stream()
                .filter(e ->
                        e.category().equals("control.refused") && e.reason().equals(reason))
                .mapToLong(TransportEvent::count)
                .sum();
    }
}
