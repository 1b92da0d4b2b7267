package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.spi.RecordingDomainListener;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sends reported done whose sender closes right after (issue 21). tcp;ofi_rxm reports an eager send done once its
 * bytes are in the kernel's socket buffer; a receiver that does not read (a stopped process, a long pause) leaves
 * them there, and a socket closed while it holds bytes its owner has not read is reset by the kernel, which drops
 * what it had not transmitted yet. The receiver runs in a process of its own ({@link FabricHeldReceiver}).
 */
class FabricSendsDoneAtCloseTest {

    /** Sends of {@link #SIZE} bytes, more than a receiver that reads nothing takes into its socket. */
    private static final int MESSAGES = 256;

    private static final int SIZE = 8 << 10;
    /** The receive buffer for what the receiver sends this side. */
    private static final long INBOX = 1L << 40;

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();
    private @Nullable ChildJvm receiver;

    @TempDir
    Path crashLogs;

    @AfterEach
    void close() {
        if (receiver != null) {
            receiver.close();
        }
        fixture.close();
        arena.close();
    }

    /**
     * The receiver sent this side a message and stopped reading; this side sends until its sends stop completing,
     * receives the receiver's second message into its socket without reading it, and closes while the receiver
     * resumes. Every send reported done must arrive, once.
     */
    @Test
    void everySendReportedDoneArrivesOnceThoughItsSenderClosedWithAMessageOfTheReceiverUnread() throws Exception {
        FabricFixture.assumeAvailable("tcp");
        final Held held = held(Duration.ofSeconds(60));
        final ChildJvm child = held.child();
        final FabricDomain sender = held.sender();
        final List<Integer> done = doneSends(held.events());
        child.println("SEND"); // lands in this side's socket, which nothing reads any more
        child.awaitLine("SENT");

        final Thread closing = Thread.ofPlatform().start(sender::close);
        child.println("RESUME");
        closing.join(Duration.ofMinutes(2));
        assertThat(closing.isAlive()).as("the close ended").isFalse();
        child.println("REPORT " + done.size());
        final List<Integer> received = parse(child.awaitLine("RECEIVED "));

        assertThat(done).as("sends reported done (the premise)").isNotEmpty();
        assertThat(received)
                .as("what the receiver got, by each message's sequence number")
                .doesNotHaveDuplicates()
                .containsAll(done)
                .allSatisfy(seq -> assertThat(seq).isBetween(0, MESSAGES));
    }

    /**
     * The receiver is stopped (SIGSTOP) with sends reported done to it: the close cannot learn that they were read,
     * ends at its timeout and names the receiver and how many sends it leaves unconfirmed.
     */
    @Test
    void aCloseToAStoppedReceiverEndsAtItsTimeoutNamingWhatStaysUnconfirmed() throws Exception {
        FabricFixture.assumeAvailable("tcp");
        final Held held = held(Duration.ofMillis(500));
        final ChildJvm child = held.child();
        final FabricDomain sender = held.sender();
        signal("-STOP", child.process());
        try {
            final int done = doneSends(held.events()).size();
            sender.close();
            assertThat(sender.unconfirmedAtClose())
                    .as("what the close left unconfirmed")
                    .singleElement()
                    .asString()
                    .contains(held.address().toString())
                    .contains(done + " sends reported done");
        } finally {
            signal("-CONT", child.process());
        }
    }

    /**
     * The receiver is killed (SIGKILL) with sends reported done to it: the close ends (at its question's failure or
     * its timeout) and names the receiver.
     */
    @Test
    void aCloseToAKilledReceiverEndsNamingIt() throws Exception {
        FabricFixture.assumeAvailable("tcp");
        final Held held = held(Duration.ofSeconds(1));
        final ChildJvm child = held.child();
        final FabricDomain sender = held.sender();
        child.close(); // SIGKILL, and waits for the process to end
        sender.close();
        assertThat(sender.unconfirmedAtClose())
                .as("what the close left unconfirmed")
                .singleElement()
                .asString()
                .contains(held.address().toString());
    }

    /** The receiver process, its address, and this side's domain with sends reported done to it, held there. */
    private record Held(ChildJvm child, NetworkAddress address, FabricDomain sender, RecordingDomainListener events) {}

    /** Starts the receiver and opens this side (its close waits {@code closeTimeout}), then holds sends done there. */
    private Held held(final Duration closeTimeout) throws IOException, InterruptedException {
        final ChildJvm child = start();
        final NetworkAddress address =
                NetworkAddress.parse(child.awaitLine("READY ").substring(6));
        final RecordingDomainListener events = new RecordingDomainListener();
        final FabricDomain sender = open(events, closeTimeout);
        holdWithSendsDone(child, sender, sender.resolve(address), events);
        return new Held(child, address, sender, events);
    }

    private FabricDomain open(final RecordingDomainListener events, final Duration closeTimeout) {
        final FabricDomain sender = (FabricDomain) fixture.open(
                FabricFixture.config(
                        "tcp", 1, Map.of(FabricTransport.CLOSE_TIMEOUT_OPTION, Long.toString(closeTimeout.toMillis()))),
                0,
                events);
        sender.postReceive(INBOX, arena.allocate(64, 64));
        return sender;
    }

    /**
     * The receiver learns this side's address and sends to it once (its question for this side's pool sizes answered
     * by a thread polling this side meanwhile), then stops reading; this side sends one message before that (number 0,
     * learning the receiver's pool sizes) and {@link #MESSAGES} after it (1 to {@link #MESSAGES}) until they
     * all ended or 2 s passed, as many as the receiver's socket and this side's take.
     */
    private void holdWithSendsDone(
            final ChildJvm child, final FabricDomain sender, final long peer, final RecordingDomainListener events)
            throws InterruptedException {
        final MemorySegment first = arena.allocate(SIZE, 64);
        sender.send(0, peer, first); // asks for the receiver's pool sizes first, which a held receiver never answers
        fixture.pollUntil(() -> events.ended(0));
        final AtomicBoolean peering = new AtomicBoolean(true);
        final Thread polling = Thread.ofPlatform().start(() -> {
            while (peering.get()) {
                sender.poll();
            }
        });
        try {
            child.println("PEER " + sender.address());
            child.awaitLine("PEERED");
        } finally {
            peering.set(false);
            polling.join();
        }
        child.println("HOLD");
        child.awaitLine("HOLDING");
        for (int seq = 1; seq <= MESSAGES; seq++) {
            final MemorySegment message = arena.allocate(SIZE, 64);
            message.set(ValueLayout.JAVA_INT, 0, seq);
            sender.send(seq, peer, message);
        }
        final long settled = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (events.ended() <= MESSAGES && System.nanoTime() - settled < 0) {
            sender.poll();
        }
    }

    private static List<Integer> doneSends(final RecordingDomainListener events) {
        final List<Integer> done = new ArrayList<>();
        synchronized (events.completed) {
            for (final long token : events.completed.keySet()) {
                done.add((int) token);
            }
        }
        return done;
    }

    /** The numbers of {@code "RECEIVED [1, 2, ...]"}. */
    private static List<Integer> parse(final String line) {
        final String list =
                line.substring("RECEIVED [".length(), line.length() - 1).strip();
        return list.isEmpty()
                ? List.of()
                : Arrays.stream(list.split(",\\s*")).map(Integer::valueOf).toList();
    }

    private static void signal(final String signal, final Process process) throws IOException, InterruptedException {
        assertThat(new ProcessBuilder("kill", signal, Long.toString(process.pid()))
                        .start()
                        .waitFor())
                .as("kill %s %s", signal, process.pid())
                .isZero();
    }

    private ChildJvm start() throws IOException {
        final ChildJvm child = ChildJvm.start(
                FabricFixture.childJvm(FabricHeldReceiver.class, Integer.toString(MESSAGES + 1), Integer.toString(SIZE))
                        .directory(crashLogs.toFile()));
        receiver = child;
        return child;
    }
}
