package dev.transferengine.test;

import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/** Starts a {@link PeerProcess} in a child JVM with this JVM's class path and talks to it line by line. */
public final class PeerProcesses implements AutoCloseable {

    private static final Pattern LOG_LINE = Pattern.compile("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} ");

    private final Process process;
    private final BufferedReader out;
    private final PrintWriter in;
    private final NetworkAddress address;
    private final RegionDescriptor descriptor;

    private PeerProcesses(final Process process) throws IOException {
        this.process = process;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        final String[] ready = expect("READY");
        this.address = NetworkAddress.parse(ready[1]);
        this.descriptor = RegionDescriptor.parse(ready[2]);
    }

    /**
     * Starts a peer: {@code transport nics regionBytes [key=value...]}.
     *
     * @param args the peer's arguments
     * @return the running peer, once it reported its address and region
     * @throws IOException if it cannot start or does not report
     */
    public static PeerProcesses start(final String... args) throws IOException {
        return start(List.of(), args);
    }

    /**
     * Starts a peer whose JVM gets {@code jvmOptions} too, e.g. a small heap.
     *
     * @param jvmOptions options for the child JVM
     * @param args the peer's arguments
     * @return the running peer
     * @throws IOException if it cannot start or does not report
     */
    public static PeerProcesses start(final List<String> jvmOptions, final String... args) throws IOException {
        return start(List.of(), jvmOptions, args);
    }

    /**
     * Starts a peer under {@code launcher}, e.g. {@code ip netns exec NAME} to run it in a network namespace.
     *
     * @param launcher the command that runs the JVM
     * @param jvmOptions options for the child JVM
     * @param args the peer's arguments
     * @return the running peer
     * @throws IOException if it cannot start or does not report
     */
    public static PeerProcesses start(final List<String> launcher, final List<String> jvmOptions, final String... args)
            throws IOException {
        final List<String> command = new ArrayList<>(launcher);
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(PeerProcess.class.getName());
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        return new PeerProcesses(process);
    }

    /**
     * The peer engine's main address.
     *
     * @return the address
     */
    public NetworkAddress address() {
        return address;
    }

    /**
     * The descriptor of the peer's registered region.
     *
     * @return the descriptor
     */
    public RegionDescriptor descriptor() {
        return descriptor;
    }

    /**
     * The child's process id.
     *
     * @return the pid
     */
    public long pid() {
        return process.pid();
    }

    /**
     * Sends a command and returns the reply's words; the reply must start with {@code expected}.
     *
     * @param command the command line
     * @param expected the reply's first word
     * @return the reply's words
     * @throws IOException if the peer answers otherwise or not at all
     */
    public String[] ask(final String command, final String expected) throws IOException {
        in.println(command);
        return expect(expected);
    }

    private String[] expect(final String prefix) throws IOException {
        final CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                String read = out.readLine();
                // The child's log lines share its stdout: skip them (they start with a time of day).
                while (read != null && LOG_LINE.matcher(read).lookingAt()) {
                    read = out.readLine();
                }
                return read;
            } catch (final IOException e) {
                throw new IllegalStateException(e);
            }
        });
        final String reply;
        try {
            reply = line.get(180, TimeUnit.SECONDS);
        } catch (final Exception e) {
            throw new IOException("peer process gave no '" + prefix + "' line", e);
        }
        if (reply == null || !reply.startsWith(prefix)) {
            throw new IOException("peer process answered '" + reply + "', expected '" + prefix + "'");
        }
        return reply.split(" ");
    }

    /**
     * Freezes the peer (SIGSTOP), as a stalled host or a long GC pause would: its sockets and memory stay, nothing in
     * it runs until {@link #resume()}.
     *
     * @throws IOException if the signal could not be sent
     * @throws InterruptedException if interrupted while sending it
     */
    public void stop() throws IOException, InterruptedException {
        signal("STOP");
    }

    /**
     * Lets a {@link #stop() stopped} peer run again (SIGCONT).
     *
     * @throws IOException if the signal could not be sent
     * @throws InterruptedException if interrupted while sending it
     */
    public void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    private void signal(final String name) throws IOException, InterruptedException {
        final Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
                .redirectErrorStream(true)
                .start();
        final String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (kill.waitFor() != 0) {
            throw new IOException("kill -" + name + " " + process.pid() + " failed: " + output.strip());
        }
    }

    /**
     * Kills the peer at once, as a crash would.
     *
     * @throws InterruptedException if interrupted while waiting for it to end
     */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            in.println("EXIT");
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    kill();
                }
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }
}
