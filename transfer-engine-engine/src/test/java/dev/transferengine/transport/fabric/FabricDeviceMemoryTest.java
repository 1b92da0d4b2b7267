package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.EngineConfig;
import dev.transferengine.cuda.GpuMemory;
import dev.transferengine.cuda.HostBackedDeviceMemory;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Device memory on providers without FI_HMEM (libfabric 1.17's tcp and shm): registration is refused with the
 * reason, even with a device memory provider at hand, since a one-sided write into a host mirror would land
 * unnoticed and never reach the device.
 */
class FabricDeviceMemoryTest {

    private static final Map<String, String> HOST_TEST = Map.of(DeviceMemory.OPTION, HostBackedDeviceMemory.NAME);

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void refuseDeviceMemoryNamingTheMissingHmemCapability(final String provider) {
        FabricFixture.assumeAvailable(provider);
        try (FabricFixture fixture = new FabricFixture();
                Arena arena = Arena.ofConfined()) {
            final Domain domain =
                    fixture.open(FabricFixture.config(provider, 1, HOST_TEST), 0, new RecordingDomainListener());
            final MemorySegment memory = arena.allocate(4096, 4096);

            assertThatThrownBy(() -> domain.register(memory, Device.cuda(0)))
                    .isInstanceOf(DeviceUnavailableException.class)
                    .hasMessageContaining("offers no FI_HMEM")
                    .hasMessageContaining("fabric.hmem=true")
                    .hasMessageContaining("use the tcp transport");
            assertThat(domain.register(memory, Device.host())).isNotZero();
        }
    }

    @Test
    void reportAProviderWithoutHmemUnavailableWhenHmemIsRequired() {
        FabricFixture.assumeAvailable("tcp");

        assertThat(new FabricTransport()
                        .unavailabilityCause(
                                FabricFixture.config("tcp", 1, Map.of(FabricTransport.HMEM_OPTION, "true"))))
                .contains("and FI_HMEM");
    }

    /**
     * shm offers FI_HMEM (with FI_MR_HMEM) even from a libfabric built without CUDA, for host memory only; registering
     * CUDA memory then fails in fi_mr_regattr, which must say so. Not on a GPU host: libfabric 2.1 built with CUDA
     * there registers any pointer as FI_HMEM_CUDA without checking it (seen on the H200), so the refusal cannot
     * be provoked with host memory.
     */
    @Test
    void refuseCudaMemoryNamingWhatIsMissingWhenTheProviderHasFiHmemWithoutCuda() {
        Assumptions.assumeFalse(
                GpuMemory.isAvailable(),
                "a GPU host's libfabric may have CUDA, which registers host memory as FI_HMEM_CUDA unchecked");
        FabricFixture.assumeAvailable("shm");
        final EngineConfig config = FabricFixture.config("shm", 1, Map.of(FabricTransport.HMEM_OPTION, "true"));
        Assumptions.assumeTrue(
                new FabricTransport().unavailabilityCause(config) == null, "this libfabric's shm offers no FI_HMEM");
        try (FabricFixture fixture = new FabricFixture();
                Arena arena = Arena.ofConfined()) {
            final Domain domain = fixture.open(config, 0, new RecordingDomainListener());
            final MemorySegment memory = arena.allocate(1 << 20, 4096);

            assertThat(domain.description()).contains("device memory: FI_HMEM GPUDirect");
            assertThatThrownBy(() -> domain.register(memory, Device.cuda(0)))
                    .isInstanceOf(DeviceUnavailableException.class)
                    .hasMessageContaining("cannot register cuda:0 memory with FI_HMEM_CUDA")
                    .hasMessageContaining("--with-cuda");
            assertThat(domain.register(memory, Device.host())).isNotZero();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"auto", "false"})
    void openWithoutHmemUnlessItIsRequired(final String hmem) {
        FabricFixture.assumeAvailable("tcp");

        assertThat(new FabricTransport()
                        .unavailabilityCause(FabricFixture.config("tcp", 1, Map.of(FabricTransport.HMEM_OPTION, hmem))))
                .isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"yes", ""})
    void rejectAnInvalidHmemOption(final String hmem) {
        FabricFixture.assumeAvailable("tcp");

        assertThat(new FabricTransport()
                        .unavailabilityCause(FabricFixture.config("tcp", 1, Map.of(FabricTransport.HMEM_OPTION, hmem))))
                .contains("fabric.hmem must be auto, true or false");
    }
}
