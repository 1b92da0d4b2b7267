package dev.transferengine.cuda;

import dev.transferengine.IdleStrategyKind;
import dev.transferengine.TransferEngine;
import dev.transferengine.UvmChange;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.DeviceUnavailableException;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@link TransferEngine#allocUvmWatcher}: the reason without a GPU (runs in CI), the callback thread with one. */
class EngineUvmWatcherTest {

    @Test
    void refuseAWatcherWithTheReasonWhenTheEngineHasNoGpu() {
        assumeFalse(Cuda.isAvailable(), "this machine has a usable GPU");
        try (TransferEngine engine = TransferEngine.builder().build()) {
            assertThatThrownBy(() -> engine.allocUvmWatcher((o, n) -> true))
                    .isInstanceOf(DeviceUnavailableException.class)
                    .hasMessageContaining(Cuda.unavailabilityCause());
        }
    }

    @Test
    void callWatcherListenersOnTheEngineCallbackThread() {
        assumeTrue(Cuda.isAvailable(), "needs an NVIDIA GPU with libcuda.so.1: " + Cuda.unavailabilityCause());
        final List<UvmChange> changes = new CopyOnWriteArrayList<>();
        final List<String> threads = new CopyOnWriteArrayList<>();
        try (TransferEngine engine = TransferEngine.builder()
                        .idleStrategy(IdleStrategyKind.SPIN)
                        .build();
                WatcherKernels kernels = WatcherKernels.load(CudaDevice.get(0))) {
            final UvmWatcher watcher = engine.allocUvmWatcher((o, n) -> {
                changes.add(new UvmChange(o, n));
                threads.add(Thread.currentThread().getName());
                return n < 2;
            });
            kernels.store(watcher.devicePointer(), 1);
            kernels.synchronize();
            await().atMost(Duration.ofSeconds(30)).until(() -> changes.size() == 1);
            kernels.store(watcher.devicePointer(), 2);
            kernels.synchronize();
            await().atMost(Duration.ofSeconds(30)).until(() -> !watcher.isOpen());

            assertThat(changes).containsExactly(new UvmChange(0, 1), new UvmChange(1, 2));
            assertThat(threads).containsOnly("te-callback");
            assertThat(watcher.value()).isZero();
        }
    }
}
