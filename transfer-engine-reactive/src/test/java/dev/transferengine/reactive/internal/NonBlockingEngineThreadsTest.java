package dev.transferengine.reactive.internal;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferListener;
import dev.transferengine.exceptions.TransferEngineException;

import java.lang.foreign.Arena;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;

/** With this module on the class path, the engine finds the factory and its callbacks run on non-blocking threads. */
class NonBlockingEngineThreadsTest {

    @Test
    void threadsItMakesAreNonBlockingForReactor() throws Exception {
        final CompletableFuture<Boolean> nonBlocking = new CompletableFuture<>();
        final Thread thread = new NonBlockingEngineThreads()
                .newThread(() -> nonBlocking.complete(Schedulers.isInNonBlockingThread()));
        thread.start();
        assertThat(nonBlocking.get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void engineCallbacksRunOnANonBlockingThread() throws Exception {
        try (TransferEngine a = TransferEngine.builder().build();
                TransferEngine b = TransferEngine.builder().build();
                Arena arena = Arena.ofShared()) {
            final MemoryRegion src = a.register(arena.allocate(64), Device.host());
            final RegionDescriptor dst =
                    b.register(arena.allocate(64), Device.host()).descriptor();
            final CompletableFuture<Boolean> nonBlocking = new CompletableFuture<>();
            a.submit(SingleWrite.of(src, 0, 64, dst, 0), new TransferListener() {
                @Override
                public void onDone() {
                    nonBlocking.complete(Schedulers.isInNonBlockingThread());
                }

                @Override
                public void onError(final TransferEngineException error) {
                    nonBlocking.completeExceptionally(error);
                }
            });
            assertThat(nonBlocking.get(10, TimeUnit.SECONDS)).isTrue();
        }
    }
}
