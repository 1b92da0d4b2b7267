package dev.transferengine.autoconfigure;

import dev.transferengine.TransferEngine;
import dev.transferengine.cuda.CudaDeviceMemory;

import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** A group configured for a GPU starts only where that GPU can be used, and otherwise says why not. */
class CudaDeviceStartupTests {

    private static final CudaDeviceMemory CUDA = new CudaDeviceMemory();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TransferEngineAutoConfiguration.class));

    @Test
    void cudaDeviceWithoutAUsableGpuFailsStartUpWithCudasReason() {
        assumeTrue(CUDA.unavailabilityCause() != null, "this machine has a usable GPU");
        final @Nullable Throwable[] failure = new @Nullable Throwable[1];
        runner.withPropertyValues("transfer-engine.groups[0].cuda-device=0").run(context -> {
            assertThat(context).hasFailed();
            failure[0] = context.getStartupFailure();
        });

        final FailureAnalysis analysis = Objects.requireNonNull(
                new InvalidTransferEnginePropertyFailureAnalyzer().analyze(Objects.requireNonNull(failure[0])));
        assertThat(analysis.getDescription())
                .contains("transfer-engine.groups[0].cuda-device")
                .contains("'0'")
                .contains("no usable GPU")
                .contains(Objects.requireNonNull(CUDA.unavailabilityCause()));
        assertThat(analysis.getAction()).contains("remove transfer-engine.groups[0].cuda-device");
    }

    @Test
    void cudaDeviceBeyondTheGpusOfThisMachineFailsStartUp() {
        final @Nullable Throwable[] failure = new @Nullable Throwable[1];
        runner.withPropertyValues("transfer-engine.groups[0].cuda-device=" + (CUDA.deviceCount() + 7))
                .run(context -> {
                    assertThat(context).hasFailed();
                    failure[0] = context.getStartupFailure();
                });

        final FailureAnalysis analysis = Objects.requireNonNull(
                new InvalidTransferEnginePropertyFailureAnalyzer().analyze(Objects.requireNonNull(failure[0])));
        assertThat(analysis.getDescription()).contains("no usable GPU");
    }

    @Test
    void cudaDeviceOfAUsableGpuStarts() {
        assumeTrue(
                CUDA.unavailabilityCause() == null,
                "needs an NVIDIA GPU with libcuda.so.1: " + CUDA.unavailabilityCause());
        runner.withPropertyValues("transfer-engine.groups[0].cuda-device=0").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(TransferEngine.class).groupCount()).isEqualTo(1);
        });
    }
}
