package dev.transferengine.test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

/**
 * A real network partition for fault tests: a network namespace behind a veth pair, where a peer process runs
 * ({@link #launcher()} with {@link PeerProcesses#start(List, List, String...)}), bound to {@link #peerAddress()},
 * while the test's engine binds to {@link #hostAddress()}. {@link #drop()} adds firewall rules in the namespace that
 * drop every packet both ways, so nothing answers and nothing is refused; {@link #heal()} removes them. Needs root,
 * iproute2 and iptables (CI has them); {@link #open()} skips the calling test otherwise, naming what is missing.
 * Blocks on the {@code ip} commands it runs; any thread.
 */
public final class NetworkPartition implements AutoCloseable {

    private static final long PID = ProcessHandle.current().pid();

    private final String namespace = "te-part-" + PID;
    private final String subnet = "10.231." + PID % 250;
    private boolean dropping;

    private NetworkPartition() {}

    /**
     * Creates the namespace and its link, or skips the calling test where this machine cannot (not root, no
     * iproute2 or no iptables).
     *
     * @return the partition, healed; close it to delete the namespace
     * @throws IOException if a command cannot run
     * @throws InterruptedException if interrupted while one runs
     */
    public static NetworkPartition open() throws IOException, InterruptedException {
        final NetworkPartition partition = new NetworkPartition();
        final String unavailable = run("ip", "netns", "add", partition.namespace);
        Assumptions.assumeTrue(
                unavailable == null, "needs root and iproute2 network namespaces (ip netns add): " + unavailable);
        try {
            partition.link();
            final String noFirewall = run("ip", "netns", "exec", partition.namespace, "iptables", "-L", "-n");
            Assumptions.assumeTrue(noFirewall == null, "needs iptables in a network namespace: " + noFirewall);
            return partition;
        } catch (final RuntimeException | IOException | InterruptedException e) {
            partition.close();
            throw e;
        }
    }

    private void link() throws IOException, InterruptedException {
        final String hostLink = "tep" + PID + "a";
        final String peerLink = "tep" + PID + "b";
        require("ip", "link", "add", hostLink, "type", "veth", "peer", "name", peerLink);
        require("ip", "link", "set", peerLink, "netns", namespace);
        require("ip", "addr", "add", hostAddress() + "/30", "dev", hostLink);
        require("ip", "link", "set", hostLink, "up");
        require("ip", "netns", "exec", namespace, "ip", "addr", "add", peerAddress() + "/30", "dev", peerLink);
        require("ip", "netns", "exec", namespace, "ip", "link", "set", peerLink, "up");
        require("ip", "netns", "exec", namespace, "ip", "link", "set", "lo", "up");
    }

    /**
     * The command that runs a process inside the namespace.
     *
     * @return {@code ip netns exec <name>}
     */
    public List<String> launcher() {
        return List.of("ip", "netns", "exec", namespace);
    }

    /**
     * The address of this side of the link, for the test's engine.
     *
     * @return an IPv4 address
     */
    public String hostAddress() {
        return subnet + ".1";
    }

    /**
     * The address inside the namespace, for the peer process.
     *
     * @return an IPv4 address
     */
    public String peerAddress() {
        return subnet + ".2";
    }

    /**
     * Starts dropping every packet in and out of the namespace.
     *
     * @throws IOException if the rules cannot be added
     * @throws InterruptedException if interrupted meanwhile
     */
    public void drop() throws IOException, InterruptedException {
        firewall("-A");
        dropping = true;
    }

    /**
     * Stops dropping packets.
     *
     * @throws IOException if the rules cannot be removed
     * @throws InterruptedException if interrupted meanwhile
     */
    public void heal() throws IOException, InterruptedException {
        if (dropping) {
            firewall("-D");
            dropping = false;
        }
    }

    private void firewall(final String action) throws IOException, InterruptedException {
        require("ip", "netns", "exec", namespace, "iptables", action, "INPUT", "-j", "DROP");
        require("ip", "netns", "exec", namespace, "iptables", action, "OUTPUT", "-j", "DROP");
    }

    /** Deletes the namespace, which takes the veth pair and the rules with it. */
    @Override
    public void close() {
        try {
            run("ip", "netns", "del", namespace);
        } catch (final IOException e) {
            throw new IllegalStateException("could not delete network namespace " + namespace, e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void require(final String... command) throws IOException, InterruptedException {
        final String failure = run(command);
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
    }

    /** Runs {@code command}; null if it succeeded, else the command and what it printed. */
    private static @Nullable String run(final String... command) throws IOException, InterruptedException {
        final Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (final IOException e) {
            return String.join(" ", command) + ": " + e.getMessage();
        }
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return String.join(" ", command) + ": did not finish within 60 s";
        }
        return process.exitValue() == 0 ? null : String.join(" ", command) + ": " + output;
    }
}
