package dev.transferengine;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link StageProbe}: the workers tell it each ended operation's stages in order, and each imm that arrives. */
class StageProbeTest {

    private record Stages(
            OperationKind kind,
            long submitted,
            long taken,
            long posted,
            long completed,
            boolean success,
            String thread) {}

    /** Records what it is told; the worker calls it, the test thread reads the queues. */
    private static final class Recording implements StageProbe {
        final LinkedBlockingQueue<Stages> ended = new LinkedBlockingQueue<>();
        final LinkedBlockingQueue<Integer> imms = new LinkedBlockingQueue<>();

        @Override
        public void onStages(
                final OperationKind kind,
                final long submittedNanos,
                final long takenNanos,
                final long postedNanos,
                final long completedNanos,
                final boolean success) {
            ended.add(new Stages(
                    kind,
                    submittedNanos,
                    takenNanos,
                    postedNanos,
                    completedNanos,
                    success,
                    Thread.currentThread().getName()));
        }

        @Override
        public void onImmArrived(final int imm, final long arrivedNanos) {
            imms.add(imm);
        }
    }

    @Test
    void stagesComeInOrderOnTheWorkerAndImmArrivalsAtTheTarget() throws Exception {
        try (TransferEngine initiator = TransferEngine.builder().build();
                TransferEngine target = TransferEngine.builder().build();
                Arena arena = Arena.ofShared()) {
            final Recording sent = new Recording();
            final Recording received = new Recording();
            initiator.metrics().setStageProbe(sent);
            target.metrics().setStageProbe(received);
            final MemoryRegion source = initiator.register(arena.allocate(8192, 4096), Device.host());
            final MemoryRegion destination = target.register(arena.allocate(8192, 4096), Device.host());
            final ImmCounter counter = target.immCounter(7);

            initiator
                    .submit(new SingleWrite(
                            source, 0, 8192, destination.descriptor(), 0, Routing.sharded(1), OptionalInt.of(7)))
                    .join();
            initiator
                    .send(target.mainAddress(), new byte[16])
                    .exceptionally(e -> null)
                    .join();
            counter.await(1, Duration.ofSeconds(30));

            final Stages write = sent.ended.poll(30, TimeUnit.SECONDS);
            assertThat(write).isNotNull();
            assertThat(write.kind()).isEqualTo(OperationKind.WRITE);
            assertThat(write.success()).isTrue();
            assertThat(write.thread()).startsWith("te-worker");
            assertThat(write.taken()).isGreaterThanOrEqualTo(write.submitted());
            assertThat(write.posted()).isGreaterThanOrEqualTo(write.taken());
            assertThat(write.completed()).isGreaterThanOrEqualTo(write.posted());
            final Stages send = sent.ended.poll(30, TimeUnit.SECONDS);
            assertThat(send).isNotNull();
            assertThat(send.kind()).isEqualTo(OperationKind.SEND);
            assertThat(received.imms.poll(30, TimeUnit.SECONDS)).isEqualTo(7);

            // removed: the next operation is not timed
            initiator.metrics().setStageProbe(null);
            initiator
                    .submit(SingleWrite.of(source, 0, 4096, destination.descriptor(), 0))
                    .join();
            assertThat(sent.ended).isEmpty();
        }
    }
}
