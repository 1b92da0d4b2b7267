package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Sends and imm writes flow between several shm peer processes while one of them is killed and another is stopped
 * (SIGSTOP) and later continued (SIGCONT): every operation ends exactly once (each peer gives up on an operation at
 * its deadline, as the engine's timeout does, and the domain reports it at most once), every receive buffer comes
 * back exactly once, no NIC fails, and the survivors then exchange traffic without a failure (issue 21, item 4;
 * FabricDomain's class comment, "A gone shm peer"). Asserts outcomes only: how many operations fail during the
 * faults depends on timing.
 */
class FabricShmTrafficFaultTest {

    private static final long REGION = 1L << 20;
    /** The first round's length; the faults fall inside it. */
    private static final long TRAFFIC_MILLIS = 9_000;
    /** Each operation's deadline in the first round: well below the stop, so that operations time out. */
    private static final long TIMEOUT_MILLIS = 2_000;
    /** The second round's, among the survivors: no fault, so nothing may time out. */
    private static final long CALM_MILLIS = 2_000;

    private static final long CALM_TIMEOUT_MILLIS = 30_000;

    private final List<ChildJvm> children = new ArrayList<>();

    @AfterEach
    void close() {
        children.forEach(ChildJvm::close);
    }

    /** A peer process: its address and registered region, as a traffic target. */
    private record Peer(ChildJvm jvm, NetworkAddress address, long base, long rkey) {
        String target() {
            return address + "," + base + "," + rkey;
        }
    }

    @Test
    void everyOperationEndsOnceWhenOnePeerIsKilledAndAnotherStoppedUnderTraffic() throws Exception {
        FabricFixture.assumeAvailable("shm");
        final List<ChildJvm> started = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            started.add(startPeer());
        }
        final List<Peer> peers = new ArrayList<>();
        for (final ChildJvm child : started) {
            peers.add(ready(child));
        }
        final Peer stopped = peers.get(2);
        final Peer killed = peers.get(3);
        final List<Peer> survivors = peers.subList(0, 3);
        for (final Peer peer : peers) {
            peer.jvm().println(traffic(peer, peers, TRAFFIC_MILLIS, TIMEOUT_MILLIS));
        }

        Thread.sleep(1_500);
        signal("-STOP", stopped.jvm().process());
        Thread.sleep(1_000);
        killed.jvm().process().destroyForcibly();
        assertThat(killed.jvm().process().waitFor(30, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(3_000);
        signal("-CONT", stopped.jvm().process());

        for (final Peer peer : survivors) {
            final Map<String, String> ended = result(peer);
            assertThat(ended)
                    .as("how the operations of %s ended", peer.address())
                    .containsEntry("duplicates", "0")
                    .containsEntry("unknown", "0")
                    .containsEntry("buffersMissing", "0")
                    .containsEntry("bufferDuplicates", "0")
                    .containsEntry("nicFailed", "false");
            assertThat(Long.parseLong(ended.getOrDefault("completed", "0")))
                    .as("operations of %s completed", peer.address())
                    .isPositive();
            assertThat(errorTypes(ended.getOrDefault("errors", "none")))
                    .as("failures of %s are typed as a gone peer or the endpoint's replacement", peer.address())
                    .isSubsetOf("PeerUnreachableException", "TransferEngineException");
        }

        for (final Peer peer : survivors) {
            peer.jvm().println(traffic(peer, survivors, CALM_MILLIS, CALM_TIMEOUT_MILLIS));
        }
        for (final Peer peer : survivors) {
            final Map<String, String> ended = result(peer);
            assertThat(ended)
                    .as("afterwards, the survivors' traffic from %s", peer.address())
                    .containsEntry("failed", "0")
                    .containsEntry("cancelled", "0")
                    .containsEntry("duplicates", "0")
                    .containsEntry("buffersMissing", "0")
                    .containsEntry("nicFailed", "false");
            assertThat(Long.parseLong(ended.getOrDefault("messages", "0")))
                    .as("messages %s received from the other survivors", peer.address())
                    .isPositive();
        }
    }

    private static String traffic(final Peer from, final List<Peer> to, final long millis, final long timeoutMillis) {
        final StringBuilder command = new StringBuilder("TRAFFIC " + millis + " " + timeoutMillis);
        for (final Peer peer : to) {
            if (!peer.equals(from)) {
                command.append(' ').append(peer.target());
            }
        }
        return command.toString();
    }

    /** The peer's {@code TRAFFIC key=value...} line as a map. */
    private static Map<String, String> result(final Peer peer) throws InterruptedException {
        final String line = peer.jvm().awaitLine("TRAFFIC ");
        System.out.println(peer.address() + ": " + line);
        final Map<String, String> values = new HashMap<>();
        for (final String pair : line.substring(8).split(" ", -1)) {
            final String[] keyAndValue = pair.split("=", 2);
            values.put(keyAndValue[0], keyAndValue[1]);
        }
        return values;
    }

    /** The exception types of {@code errors} ({@code none} or {@code {Type=count,...}}). */
    private static List<String> errorTypes(final String errors) {
        final List<String> types = new ArrayList<>();
        if (!errors.equals("none")) {
            for (final String entry : errors.substring(1, errors.length() - 1).split(",", -1)) {
                types.add(entry.substring(0, entry.indexOf('=')));
            }
        }
        return types;
    }

    /** Starts a peer process; {@link #ready} waits for it (the JVMs start side by side). */
    private ChildJvm startPeer() throws IOException {
        final ChildJvm child =
                ChildJvm.start(FabricFixture.childJvm(FabricPeerProcess.class, "shm", Long.toString(REGION)));
        children.add(child);
        return child;
    }

    private static Peer ready(final ChildJvm child) throws InterruptedException {
        final String[] ready = child.awaitLine("READY ").split(" ", -1);
        return new Peer(child, NetworkAddress.parse(ready[1]), Long.parseLong(ready[2]), Long.parseLong(ready[3]));
    }

    private static void signal(final String signal, final Process process) throws Exception {
        assertThat(new ProcessBuilder("kill", signal, Long.toString(process.pid()))
                        .start()
                        .waitFor())
                .isZero();
    }
}
