package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.RecordingDomainListener;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Messages that wait at their receiver for a buffer while their sender closes (issue 21). tcp;ofi_rxm sends a message
 * above its eager limit by rendezvous (1.x; 2.x: in segments up to 8 times the limit, rendezvous beyond): only its
 * first packet travels until a buffer takes it, and a receiver whose buffer took such a message after its sender
 * closed died (SIGSEGV in libfabric, 1.17 and 2.1). The receiver runs in a process of its own
 * ({@link FabricLargeMessageReceiver}), so a crash fails this test instead of the test JVM.
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
     * The receiver has one buffer, which the first message takes; the second waits for it while the sender closes,
     * and the buffer is posted again after that. Each send ends: done, and then the receiver has it, or (above RxM's
     * eager limit) refused at once with {@link InvalidRequestException}; the receiver lives.
     */
    @ParameterizedTest
    @ValueSource(ints = {16 << 10, 64 << 10, 1 << 20, 16 << 20})
    void aMessageThatWaitsForABufferAfterItsSenderClosedLandsOrWasRefusedAndTheReceiverLives(final int size)
            throws Exception {
        FabricFixture.assumeAvailable("tcp");
        final ChildJvm child = start(size);
        final NetworkAddress address =
                NetworkAddress.parse(child.awaitLine("READY ").substring(6));
        final RecordingDomainListener events = new RecordingDomainListener();
        final FabricDomain sender = (FabricDomain) fixture.open("tcp", 0, events);
        final long peer = sender.resolve(address);
        for (int i = 1; i <= 2; i++) {
            final MemorySegment message = arena.allocate(size, 64);
            message.fill((byte) i);
            sender.send(i, peer, message);
        }
        final long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!(events.ended(1) && events.ended(2)) && System.nanoTime() - giveUp < 0) {
            sender.poll(); // a message sent by rendezvous ends only once the receiver read it
        }
        final List<Byte> done = new ArrayList<>();
        for (int i = 1; i <= 2; i++) {
            if (events.completed.containsKey((long) i)) {
                done.add((byte) i);
            }
        }
        final boolean eager = size <= sender.largestSend();
        fixture.close();
        child.println("REPOST " + done.size());

        assertThat(child.awaitLine("ALIVE "))
                .as("what the receiver got, by each message's last byte")
                .isEqualTo("ALIVE " + done);
        if (eager) {
            assertThat(events.failed).as("the sender's failures").isEmpty();
        } else {
            assertThat(events.failed.values())
                    .as("sends above RxM's eager limit")
                    .hasSize(2)
                    .allSatisfy(error -> assertThat(error)
                            .isInstanceOf(InvalidRequestException.class)
                            .extracting(TransferEngineException::getMessage)
                            .asString()
                            .contains("eager limit (" + sender.largestSend() + " bytes)"));
        }
    }

    private ChildJvm start(final int size) throws IOException {
        final ChildJvm child =
                ChildJvm.start(FabricFixture.childJvm(FabricLargeMessageReceiver.class, Integer.toString(size))
                        .directory(crashLogs.toFile())); // where its JVM writes hs_err_pid*.log if it dies
        receiver = child;
        return child;
    }
}
