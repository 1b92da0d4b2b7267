package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
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
 * it), and a receiver whose buffer took such a header from a closed sender died (SIGSEGV in libfabric, 1.17 and 2.1).
 * The receiver runs in a process of its own ({@link FabricLargeMessageReceiver}), so a crash fails this test instead
 * of the test JVM.
 */
class FabricLargeMessageTest {

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
     * The receiver has one buffer, which the first message takes; the second waits for it while the sender closes.
     * Posted again, the buffer takes the second message whole, and the receiver lives.
     */
    @ParameterizedTest
    @ValueSource(ints = {1 << 20, 16 << 20})
    void aMessageThatWaitsForABufferAfterItsSenderClosedLandsWhenOneIsPosted(final int size) throws Exception {
        FabricFixture.assumeAvailable("tcp");
        final ChildJvm child = start(size);
        final NetworkAddress address =
                NetworkAddress.parse(child.awaitLine("READY ").substring(6));
        final RecordingDomainListener events = new RecordingDomainListener();
        final Domain sender = fixture.open("tcp", 0, events);
        final long peer = sender.resolve(address);
        final MemorySegment first = arena.allocate(size, 64);
        final MemorySegment second = arena.allocate(size, 64);
        second.fill((byte) 2);

        sender.send(10, peer, first);
        sender.send(11, peer, second);
        fixture.pollUntil(() -> events.ended(10));
        assertThat(events.failed).as("the sender's failures").isEmpty();
        final long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (!events.ended(11) && System.nanoTime() - giveUp < 0) {
            sender.poll(); // by rendezvous, the second would end only once the receiver read it
        }
        fixture.close();
        assertThat(events.failed).as("the sender's failures").isEmpty();
        child.println("REPOST");

        assertThat(child.awaitLine("RECEIVED ")).isEqualTo("RECEIVED 1 " + size + " 0");
        assertThat(child.awaitLine("RECEIVED ")).isEqualTo("RECEIVED 2 " + size + " 2");
    }

    private ChildJvm start(final int size) throws IOException {
        final ChildJvm child =
                ChildJvm.start(FabricFixture.childJvm(FabricLargeMessageReceiver.class, Integer.toString(size))
                        .directory(crashLogs.toFile())); // where its JVM writes hs_err_pid*.log if it dies
        receiver = child;
        return child;
    }
}
