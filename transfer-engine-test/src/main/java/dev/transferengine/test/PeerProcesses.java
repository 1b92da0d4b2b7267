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

    /** Starts a peer: {@code transport nics regionBytes [key=value...]}. */
    public static PeerProcesses start(final String... args) throws IOException {
        return start(List.of(), args);
    }

    /** Starts a peer whose JVM gets {@code jvmOptions} too, e.g. a small heap. */
    public static PeerProcesses start(final List<String> jvmOptions, final String... args) throws IOException {
        return start(List.of(), jvmOptions, args);
    }

    /** Starts a peer under {@code launcher}, e.g. {@code ip netns exec NAME} to run it in a network namespace. */
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

    public NetworkAddress address() {
        return address;
    }

    public RegionDescriptor descriptor() {
        return descriptor;
    }

    public long pid() {
        return process.pid();
    }

    /** Sends a command and returns the reply's words; the reply must start with {@code expected}. */
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

    /** Kills the peer at once, as a crash would. */
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
