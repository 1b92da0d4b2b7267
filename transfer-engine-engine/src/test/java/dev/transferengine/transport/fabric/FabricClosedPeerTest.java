package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A peer endpoint of this process closes first: shm reaches it through its own mapping, which its close unmaps, so
 * before {@link FabricLocalEndpoints} the next write killed the JVM (SIGSEGV, exit 134). Now it fails typed. A
 * writer of this process that closed before its target read its first post killed it too, on 2.1; now the writer's
 * close waits until the target read it.
 */
class FabricClosedPeerTest {

    private final Arena arena = Arena.ofShared();
    private final FabricFixture writerSide = new FabricFixture();
    private final FabricFixture targetSide = new FabricFixture();
    private final RecordingDomainListener writerEvents = new RecordingDomainListener();
    private final RecordingDomainListener targetEvents = new RecordingDomainListener();
    private final MemorySegment src = arena.allocate(4096, 4096);
    private final MemorySegment dst = arena.allocate(4096, 4096);

    @AfterEach
    void close() {
        targetSide.close();
        writerSide.close();
        arena.close();
    }

    @Test
    void writesToAnShmPeerOfThisProcessThatClosedFailAsUnreachable() {
        FabricFixture.assumeAvailable("shm");
        final ShmPair pair = openShmPair();
        pair.writer().write(write(pair, 1, 4096));
        writerSide.pollUntil(() -> {
            targetSide.pollAll(); // shm progress is manual: the target must poll for the write to land
            return writerEvents.ended(1);
        });
        assertThat(writerEvents.completed).containsKey(1L);

        targetSide.close();
        for (int w = 2; w <= 4; w++) {
            pair.writer().write(write(pair, w, 4096));
            final long token = w;
            writerSide.pollUntil(() -> writerEvents.ended(token));
        }

        assertThat(writerEvents.failed).containsOnlyKeys(2L, 3L, 4L);
        assertThat(writerEvents.failed.values())
                .allSatisfy(error -> assertThat(error).isInstanceOf(PeerUnreachableException.class));
        assertThat(pair.writer().peers())
                .anySatisfy(info -> assertThat(info.unreachable()).isTrue());
    }

    /**
     * A writer endpoint of this process closes before its target read the writer's first post. libfabric 2.1's shm
     * sends a connection request with a peer's first command; the target reads it at its next progress and looks the
     * writer's name up in the process's list of endpoint names, which keeps a closed endpoint's entry and the address of
     * its region, unmapped by the close: {@code smr_progress_connreq} reads the region's pid there, SIGSEGV in {@code
     * smr_ep_progress} (exit 134) on 2.1 before the writer's close waited until the target read its posts (here the
     * test thread drives both, so the close reads the target's completions itself).
     */
    @Test
    void aTargetReadsTheFirstPostOfAWriterOfThisProcessThatClosed() {
        FabricFixture.assumeAvailable("shm");
        final ShmPair pair = openShmPair();
        pair.writer().write(write(pair, 1, 64));
        writerSide.pollAll();

        writerSide.close(); // the target has not polled: the writer's first post waits unread in its queue
        targetSide.pollAll();

        assertThat(targetEvents.failed).isEmpty();
    }

    /**
     * As above with the target driven by a thread of its own, which polls on while the writer closes: the close waits
     * until that thread read the writer's first post.
     */
    @Test
    void aWriterOfThisProcessClosesWhileAnotherThreadDrivesItsTarget() throws InterruptedException {
        FabricFixture.assumeAvailable("shm");
        final ShmPair pair = openShmPair();
        final CountDownLatch driving = new CountDownLatch(1);
        final CountDownLatch closing = new CountDownLatch(1);
        final AtomicBoolean stop = new AtomicBoolean();
        final CompletableFuture<Void> driver = CompletableFuture.runAsync(
                () -> {
                    targetSide.pollAll(); // from now on this thread drives the target
                    driving.countDown();
                    awaitQuietly(closing);
                    while (!stop.get()) {
                        targetSide.pollAll();
                    }
                },
                task -> Thread.ofPlatform().start(task));
        driving.await();
        pair.writer().write(write(pair, 1, 64));
        writerSide.pollAll();

        closing.countDown();
        writerSide.close();
        stop.set(true);
        driver.join();

        assertThat(targetEvents.failed).isEmpty();
    }

    /**
     * Two domains of this process that posted to each other close at the same time, each on its own thread: each
     * close reads its own completions while it waits for the other's reads, so both closes return.
     */
    @Test
    void twoDomainsOfThisProcessThatPostedToEachOtherCloseTogether() {
        FabricFixture.assumeAvailable("shm");
        final ShmPair pair = openShmPair();
        final Domain target = pair.target();
        final long back = target.resolve(pair.writer().address());
        final CyclicBarrier together = new CyclicBarrier(2);
        final CompletableFuture<Void> writerClosed =
                closeAfterPosting(together, writerSide, () -> pair.writer().write(write(pair, 1, 64)));
        final CompletableFuture<Void> targetClosed = closeAfterPosting(
                together,
                targetSide,
                () -> target.write(new WriteDescriptor()
                        .token(2)
                        .source(dst, 0, pair.dstKey(), 64)
                        .target(back, src.address(), 0, pair.srcKey())
                        .imm(true, 2)));

        CompletableFuture.allOf(writerClosed, targetClosed).join();

        assertThat(writerEvents.failed.values())
                .allSatisfy(error -> assertThat(error).isInstanceOf(EngineClosedException.class));
    }

    /** On a thread of its own: posts, polls {@code side} once (its first post goes), then closes it with the other. */
    private static CompletableFuture<Void> closeAfterPosting(
            final CyclicBarrier together, final FabricFixture side, final Runnable post) {
        return CompletableFuture.runAsync(
                () -> {
                    post.run();
                    side.pollAll();
                    awaitQuietly(together);
                    side.close();
                },
                task -> Thread.ofPlatform().start(task));
    }

    private static void awaitQuietly(final CountDownLatch latch) {
        try {
            latch.await();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static void awaitQuietly(final CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (final BrokenBarrierException e) {
            throw new IllegalStateException("the other side failed", e);
        }
    }

    /** A writer and a target shm domain of this process, the writer's source and the target's destination keys. */
    private record ShmPair(Domain writer, Domain target, long srcKey, long dstKey, long peer) {}

    private ShmPair openShmPair() {
        final Domain writer = writerSide.open("shm", 0, writerEvents);
        final Domain target = targetSide.open("shm", 0, targetEvents);
        return new ShmPair(
                writer,
                target,
                writer.register(src, Device.host()),
                target.register(dst, Device.host()),
                writer.resolve(target.address()));
    }

    /** A write of {@code bytes} from the writer's source to the target's destination, with imm {@code token}. */
    private WriteDescriptor write(final ShmPair pair, final int token, final long bytes) {
        return new WriteDescriptor()
                .token(token)
                .source(src, 0, pair.srcKey(), bytes)
                .target(pair.peer(), dst.address(), 0, pair.dstKey())
                .imm(true, token);
    }
}
