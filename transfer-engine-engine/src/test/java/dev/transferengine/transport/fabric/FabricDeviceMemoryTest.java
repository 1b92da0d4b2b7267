package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.cuda.HostBackedDeviceMemory;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

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

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void reportAProviderWithoutHmemUnavailableWhenHmemIsRequired(final String provider) {
        FabricFixture.assumeAvailable(provider);

        assertThat(new FabricTransport()
                        .unavailabilityCause(
                                FabricFixture.config(provider, 1, Map.of(FabricTransport.HMEM_OPTION, "true"))))
                .contains("and FI_HMEM");
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
