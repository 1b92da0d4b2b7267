package dev.transferengine.cuda;

import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.DeviceMemory;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** What the CUDA binding reports with and without a GPU; the no-GPU half runs in CI. */
class CudaAvailabilityTest {

    @Test
    void findTheGpuWhereTheNvidiaDriverIsInstalled() {
        assumeTrue(Files.exists(Path.of("/dev/nvidia0")), "needs an NVIDIA GPU (/dev/nvidia0)");

        assertThat(Cuda.unavailabilityCause()).isNull();
        assertThat(Cuda.isAvailable()).isTrue();
        assertThat(Cuda.deviceCount()).isPositive();
        assertThat(DeviceMemory.require(DeviceMemory.DEFAULT, 0)).isInstanceOf(CudaDeviceMemory.class);
    }

    @Test
    void sayWhyCudaIsUnavailableInsteadOfFailingToLink() {
        assumeFalse(Cuda.isAvailable(), "this machine has a usable GPU");

        assertThat(Cuda.unavailabilityCause()).isNotBlank();
        assertThat(Cuda.deviceCount()).isZero();
        assertThatThrownBy(Cuda::ensureAvailability)
                .isInstanceOf(DeviceUnavailableException.class)
                .hasMessage("CUDA is unavailable: " + Cuda.unavailabilityCause());
    }

    @Test
    void nameTheMissingDriverOnAMachineWithoutLibcuda() {
        assumeFalse(Files.exists(Path.of("/dev/nvidia0")), "this machine has an NVIDIA GPU");
        assumeFalse(Boolean.getBoolean(Cuda.DISABLED_PROPERTY), "CUDA is disabled by property");

        assertThat(Cuda.unavailabilityCause()).contains("libcuda.so.1");
    }

    @Test
    void refuseDevicesAndWatchersWithTheReasonWhenCudaIsUnavailable() {
        assumeFalse(Cuda.isAvailable(), "this machine has a usable GPU");

        assertThatThrownBy(() -> CudaDevice.get(0))
                .isInstanceOf(DeviceUnavailableException.class)
                .hasMessageContaining(Cuda.unavailabilityCause());
        assertThatThrownBy(() -> UvmWatchers.open(0, UvmWatchersConfig.defaults()))
                .isInstanceOf(DeviceUnavailableException.class)
                .hasMessageContaining(Cuda.unavailabilityCause());
        assertThatThrownBy(() -> DeviceMemory.require(DeviceMemory.DEFAULT, 0))
                .isInstanceOf(DeviceUnavailableException.class)
                .hasMessage("device memory 'cuda' is unavailable: " + Cuda.unavailabilityCause());
    }

    @Test
    void refuseADeviceOrdinalBeyondTheDevicesPresent() {
        assumeTrue(Cuda.isAvailable(), "needs an NVIDIA GPU with libcuda.so.1: " + Cuda.unavailabilityCause());

        assertThatThrownBy(() -> CudaDevice.get(Cuda.deviceCount()))
                .isInstanceOf(DeviceUnavailableException.class)
                .hasMessageContaining("no CUDA device " + Cuda.deviceCount());
    }

    @Test
    void nameAnUnknownDeviceMemoryProviderAndTheOnesFound() {
        assertThatThrownBy(() -> DeviceMemory.require("no-such-memory", 0))
                .isInstanceOf(DeviceUnavailableException.class)
                .hasMessageContaining("no device memory provider 'no-such-memory'")
                .hasMessageContaining("cuda");
    }
}
