package dev.transferengine.cuda;

import dev.transferengine.TransferEngine;
import dev.transferengine.UvmChange;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@link ReactiveTransferEngine#watch}: the error without a GPU (runs in CI), kernel stores as a Flux with one. */
class ReactiveWatchTest {

    @Test
    void shouldFailTheFluxWithTheReasonWhenTheEngineHasNoGpu() {
        assumeFalse(Cuda.isAvailable(), "this machine has a usable GPU");
        try (TransferEngine engine = TransferEngine.builder().build()) {
            StepVerifier.create(new ReactiveTransferEngine(engine).watch(watcher -> {}))
                    .expectError(DeviceUnavailableException.class)
                    .verify(Duration.ofSeconds(30));
        }
    }

    @Test
    void shouldEmitEachKernelStoreAndReleaseTheSlotOnCancel() {
        assumeTrue(Cuda.isAvailable(), "needs an NVIDIA GPU with libcuda.so.1: " + Cuda.unavailabilityCause());
        final AtomicReference<UvmWatcher> allocated = new AtomicReference<>();
        try (TransferEngine engine = TransferEngine.builder().build();
                WatcherKernels kernels = WatcherKernels.load(CudaDevice.get(0))) {
            StepVerifier.create(new ReactiveTransferEngine(engine).watch(watcher -> {
                        allocated.set(watcher);
                        kernels.store(watcher.devicePointer(), 5);
                        kernels.synchronize();
                    }))
                    .expectNext(new UvmChange(0, 5))
                    .then(() -> {
                        kernels.store(allocated.get().devicePointer(), 9);
                        kernels.synchronize();
                    })
                    .expectNext(new UvmChange(5, 9))
                    .thenCancel()
                    .verify(Duration.ofSeconds(30));
            assertThat(allocated.get().isOpen()).isFalse();
        }
    }
}
