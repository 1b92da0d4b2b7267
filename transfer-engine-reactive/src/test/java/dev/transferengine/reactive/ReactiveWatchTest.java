package dev.transferengine.reactive;

import dev.transferengine.TransferEngine;
import dev.transferengine.UvmChange;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.UvmWatcherProvider;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link ReactiveTransferEngine#watch}: the error without a GPU (runs in CI), stores to the slot as a Flux with one. The
 * slot is pinned host memory mapped for the device: with unified addressing its device pointer is its host address,
 * so a host store stands in for a kernel's (the engine's own GPU tests store from a kernel).
 */
class ReactiveWatchTest {

    private static @Nullable String unavailabilityCause() {
        try {
            return UvmWatcherProvider.require(UvmWatcherProvider.DEFAULT).unavailabilityCause();
        } catch (final DeviceUnavailableException e) {
            return e.getMessage();
        }
    }

    @SuppressWarnings("restricted") // the slot's address comes from the provider, which sized it
    private static void store(final UvmWatcher watcher, final long value) {
        MemorySegment.ofAddress(watcher.devicePointer())
                .reinterpret(Long.BYTES)
                .set(ValueLayout.JAVA_LONG_UNALIGNED, 0, value);
    }

    @Test
    void failTheFluxWithTheReasonWhenTheEngineHasNoGpu() {
        assumeFalse(unavailabilityCause() == null, "this machine has a usable GPU");
        try (TransferEngine engine = TransferEngine.builder().build()) {
            StepVerifier.create(new ReactiveTransferEngine(engine).watch(watcher -> {}))
                    .expectError(DeviceUnavailableException.class)
                    .verify(Duration.ofSeconds(30));
        }
    }

    @Test
    void emitEachStoreToTheSlotAndReleaseItOnCancel() {
        final String cause = unavailabilityCause();
        assumeTrue(cause == null, () -> "needs an NVIDIA GPU with libcuda.so.1: " + cause);
        final AtomicReference<UvmWatcher> allocated = new AtomicReference<>();
        try (TransferEngine engine = TransferEngine.builder().build()) {
            StepVerifier.create(new ReactiveTransferEngine(engine).watch(watcher -> {
                        allocated.set(watcher);
                        store(watcher, 5);
                    }))
                    .expectNext(new UvmChange(0, 5))
                    .then(() -> store(allocated.get(), 9))
                    .expectNext(new UvmChange(5, 9))
                    .thenCancel()
                    .verify(Duration.ofSeconds(30));
            assertThat(allocated.get().isOpen()).isFalse();
        }
    }
}
