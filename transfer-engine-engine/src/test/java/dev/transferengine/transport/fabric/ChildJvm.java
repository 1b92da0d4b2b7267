package dev.transferengine.transport.fabric;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.assertj.core.api.Assertions;

/**
 * A child process of a fabric test, a peer JVM ({@link FabricFixture#childJvm}) or a C program ({@link CPrograms}),
 * whose standard output a thread of its own reads line by line: the test waits for a line ({@link #awaitLine}) or for
 * the output to end ({@link #awaitOutput}) with a deadline, so a child that hangs or dies fails the test, naming what
 * it printed and its exit status, instead of blocking it. {@link #close} kills the child.
 */
final class ChildJvm implements AutoCloseable {

    /**
     * How long a test waits for one line: a guard against a hung child, not a timing assertion, so generous: a JVM
     * started on a loaded 2-core CI machine (load about 35) took more than 60 s to print its first line.
     */
    static final Duration LINE_WAIT = Duration.ofMinutes(3);

    private static final int LINES_KEPT = 20;

    private final Process process;
    private final PrintWriter in;
    /** The child's lines as they come; empty once its output ended. */
    private final BlockingQueue<Optional<String>> lines = new LinkedBlockingQueue<>();
    /** The last lines taken, for a failure's message. */
    private final Deque<String> seen = new ArrayDeque<>();

    private boolean ended;

    private ChildJvm(final Process process) {
        this.process = process;
        this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Thread.ofPlatform().daemon().name("child-jvm-" + process.pid() + "-out").start(this::pump);
    }

    /** Starts {@code builder}'s command (its standard error as the builder says). */
    static ChildJvm start(final ProcessBuilder builder) throws IOException {
        return new ChildJvm(builder.start());
    }

    Process process() {
        return process;
    }

    /** Writes {@code line} to the child's standard input. */
    void println(final String line) {
        in.println(line);
    }

    /**
     * The next line that starts with {@code prefix}, skipping the others (the child logs to the same stream); fails
     * if none comes within {@link #LINE_WAIT} or the child's output ends first.
     */
    String awaitLine(final String prefix) throws InterruptedException {
        final long deadline = System.nanoTime() + LINE_WAIT.toNanos();
        while (!ended) {
            final Optional<String> next = lines.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (next == null) {
                break;
            }
            if (next.isEmpty()) {
                ended = true;
                break;
            }
            final String line = next.get();
            remember(line);
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        return Assertions.fail(
                "the child JVM printed no line starting with '%s' %s (exit status %s); its last lines: %s",
                prefix, ended ? "before its output ended" : "within " + LINE_WAIT, exitStatus(), seen);
    }

    /**
     * Every line the child prints until its output ends (it exited, or closed the stream); fails if that takes longer
     * than {@code within} or the child prints more than {@code maxLines} lines, so a child that hangs or floods cannot
     * hold the test.
     */
    List<String> awaitOutput(final Duration within, final int maxLines) throws InterruptedException {
        final List<String> output = new ArrayList<>();
        final long deadline = System.nanoTime() + within.toNanos();
        while (!ended && output.size() <= maxLines) {
            final Optional<String> next = lines.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (next == null) {
                break;
            }
            if (next.isEmpty()) {
                ended = true;
            } else {
                remember(next.get());
                output.add(next.get());
            }
        }
        if (!ended) {
            Assertions.fail(
                    "the child's output did not end %s (exit status %s); its last lines: %s",
                    output.size() > maxLines ? "within " + maxLines + " lines" : "within " + within,
                    exitStatus(),
                    seen);
        }
        return output;
    }

    private void remember(final String line) {
        if (seen.size() == LINES_KEPT) {
            seen.removeFirst();
        }
        seen.addLast(line);
    }

    /** The child's exit status, waiting up to 10 s for it to end (its output ended), or what stands instead. */
    String exitStatus() throws InterruptedException {
        return process.waitFor(ended ? 10 : 0, TimeUnit.SECONDS)
                ? Integer.toString(process.exitValue())
                : "none: still running";
    }

    private void pump() {
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                lines.add(Optional.of(line));
            }
        } catch (final IOException e) {
            // the stream closed under the reader: close() killed the child; its output ended all the same
        } finally {
            lines.add(Optional.empty());
        }
    }

    /** Kills the child and waits up to 10 s for it to end. */
    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
