package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A large message that waits at its receiver for a buffer after its sender closed. tcp;ofi_rxm sends a message above
 * its eager or SAR limit by rendezvous (a header; the receiver reads the data from the sender once a buffer takes
 * it), and a receiver whose buffer took such a header from a closed sender died (SIGSEGV in libfabric, 1.17 and 2.1)
 * until the engine kept tcp's messages off rendezvous ({@link FabricLibrary#keepTcpMessagesOffRendezvous}) and its
 * close waited for its sends. The receiver runs in a process of its own ({@link FabricLargeMessageReceiver}), so a
 * crash fails this test instead of the test JVM.
 */
class FabricLargeMessageTest {

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();
    private @Nullable Process receiver;

    @TempDir
    Path crashLogs;

    @AfterEach
    void close() {
        if (receiver != null) {
            receiver.destroyForcibly();
        }
        fixture.close();
        arena.close();
    }

    /**
     * The receiver has one buffer, which the first message takes; the second waits for it while the sender closes.
     * Posted again, the buffer takes the second message whole, and the receiver lives.
     */
    @ParameterizedTest
    @ValueSource(ints = {1 << 20, 16 << 20})
    void aMessageThatWaitsForABufferAfterItsSenderClosedLandsWhenOneIsPosted(final int size) throws Exception {
        FabricFixture.assumeAvailable("tcp");
        final Process process = start(size);
        final BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        final String ready = report(out);
        assertThat(ready).as("the receiver reports its address").startsWith("READY ");
        final NetworkAddress address =
                NetworkAddress.parse(Objects.requireNonNull(ready).substring(6));
        final RecordingDomainListener events = new RecordingDomainListener();
        final Domain sender = fixture.open("tcp", 0, events);
        final long peer = sender.resolve(address);
        final MemorySegment first = arena.allocate(size, 64);
        final MemorySegment second = arena.allocate(size, 64);
        second.fill((byte) 2);

        sender.send(10, peer, first);
        sender.send(11, peer, second);
        fixture.pollUntil(() -> events.ended(10));
        final long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (!events.ended(11) && System.nanoTime() - giveUp < 0) {
            sender.poll(); // by rendezvous, the second would end only once the receiver read it
        }
        fixture.close();
        final Writer in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        in.write("REPOST\n");
        in.flush();

        assertThat(report(out)).isEqualTo("RECEIVED 1 " + size + " 0");
        assertThat(report(out))
                .as(() -> "the receiver's report of the second message (null: it died, exit status "
                        + exitStatus(process) + ")")
                .isEqualTo("RECEIVED 2 " + size + " 2");
        assertThat(events.failed).isEmpty();
    }

    /** The receiver's next line that reports something (it logs to the same stream), or null once it ended. */
    private static @Nullable String report(final BufferedReader out) throws IOException {
        String line = out.readLine();
        while (line != null && !line.startsWith("READY ") && !line.startsWith("RECEIVED ")) {
            line = out.readLine();
        }
        return line;
    }

    private Process start(final int size) throws IOException {
        final ProcessBuilder builder = FabricFixture.childJvm(FabricLargeMessageReceiver.class, Integer.toString(size))
                .directory(crashLogs.toFile()); // where its JVM writes hs_err_pid*.log if it dies
        final Process process = builder.start();
        receiver = process;
        return process;
    }

    private static String exitStatus(final Process process) {
        try {
            return process.waitFor(10, TimeUnit.SECONDS) ? Integer.toString(process.exitValue()) : "none yet";
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            return "not known (interrupted)";
        }
    }
}
