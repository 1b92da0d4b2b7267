package dev.transferengine;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link CompletionObserver}: every ended write and send is told once, by kind, peer, bytes and outcome. */
class CompletionObserverTest {

    private record Completion(
            OperationKind kind, @Nullable NetworkAddress peer, long bytes, boolean success, String thread) {}

    @Test
    void writesAndSendsAreToldSeparatelyOnTheCallbackThread() throws Exception {
        try (TransferEngine initiator = TransferEngine.builder().build();
                TransferEngine target = TransferEngine.builder().build();
                Arena arena = Arena.ofShared()) {
            final LinkedBlockingQueue<Completion> told = new LinkedBlockingQueue<>();
            initiator.metrics().addCompletionObserver((kind, peer, bytes, nanos, success) -> {
                assertThat(nanos).isNotNegative();
                told.add(new Completion(
                        kind, peer, bytes, success, Thread.currentThread().getName()));
            });
            final MemoryRegion source = initiator.register(arena.allocate(16384, 4096), Device.host());
            final MemoryRegion destination = target.register(arena.allocate(16384, 4096), Device.host());
            final ReceivePool receives = target.postedReceivePool(1024, 1, message -> {});

            initiator
                    .submit(SingleWrite.of(source, 0, 16384, destination.descriptor(), 0))
                    .join();
            initiator
                    .submit(PagedWrite.of(source, destination.descriptor(), 4096, new int[] {0, 2}))
                    .join();
            initiator.send(target.mainAddress(), new byte[100]).join();
            final RegionDescriptor gone = destination.descriptor();
            target.deregister(destination);
            assertThatThrownBy(() -> initiator.submit(ImmWrite.of(gone, 1)).join())
                    .isInstanceOf(CompletionException.class);

            final NetworkAddress peer = target.mainAddress();
            assertThat(List.of(take(told), take(told), take(told), take(told)))
                    .extracting(c -> c.kind() + " " + c.peer() + " " + c.bytes() + " " + c.success())
                    .containsExactlyInAnyOrder(
                            "WRITE " + peer + " 16384 true",
                            "PAGED_WRITE " + peer + " 8192 true",
                            "SEND " + peer + " 100 true",
                            "IMM " + peer + " 0 false");
            assertThat(told).isEmpty();
            receives.close();
        }
    }

    @Test
    void anObserverThatThrowsIsCountedAndTheEngineGoesOn() throws Exception {
        try (TransferEngine initiator = TransferEngine.builder().build();
                TransferEngine target = TransferEngine.builder().build()) {
            final LinkedBlockingQueue<OperationKind> told = new LinkedBlockingQueue<>();
            initiator.metrics().addCompletionObserver((kind, peer, bytes, nanos, success) -> {
                throw new IllegalStateException("observer bug");
            });
            initiator.metrics().addCompletionObserver((kind, peer, bytes, nanos, success) -> told.add(kind));
            final ReceivePool receives = target.postedReceivePool(1024, 2, message -> {});

            initiator.send(target.mainAddress(), new byte[8]).join();
            initiator.send(target.mainAddress(), new byte[8]).join();

            assertThat(told.poll(30, TimeUnit.SECONDS)).isEqualTo(OperationKind.SEND);
            assertThat(told.poll(30, TimeUnit.SECONDS)).isEqualTo(OperationKind.SEND);
            assertThat(initiator.metrics().counter(EngineCounter.CALLBACK_ERRORS))
                    .isEqualTo(2);
            receives.close();
        }
    }

    private static Completion take(final LinkedBlockingQueue<Completion> told) throws InterruptedException {
        final Completion completion = told.poll(30, TimeUnit.SECONDS);
        assertThat(completion).as("a completion within 30 s").isNotNull();
        assertThat(completion.thread()).isEqualTo("te-callback");
        return completion;
    }
}
