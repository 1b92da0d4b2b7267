package dev.transferengine.transport.fabric;

import dev.transferengine.EngineConfig;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.Transport;

import java.util.Map;
import java.util.ServiceLoader;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Availability: clear reasons when the library or provider is missing, and the service registration. */
class FabricTransportTest {

    private final FabricTransport transport = new FabricTransport();

    @Test
    void isRegisteredAsATransportService() {
        assertThat(ServiceLoader.load(Transport.class).stream().map(ServiceLoader.Provider::type))
                .contains(FabricTransport.class);
        assertThat(transport.name()).isEqualTo("fabric");
    }

    @Test
    void aMissingLibraryIsNamedAsTheReason() {
        final EngineConfig config =
                FabricFixture.config("tcp", 1, Map.of(FabricTransport.LIBRARY_OPTION, "/nonexistent/libfabric.so.1"));

        assertThat(transport.unavailabilityCause(config))
                .contains("/nonexistent/libfabric.so.1")
                .contains("fabric.library");
        assertThatThrownBy(() -> transport.openDomain(new DomainContext(config, 0, 0, new RecordingDomainListener())))
                .isInstanceOf(TransportUnavailableException.class)
                .hasMessageContaining("/nonexistent/libfabric.so.1");
    }

    @Test
    void aLibraryThatIsNotLibfabricIsRefused() {
        final EngineConfig config = FabricFixture.config("tcp", 1, Map.of(FabricTransport.LIBRARY_OPTION, "libc.so.6"));

        assertThat(transport.unavailabilityCause(config)).contains("does not export fi_getinfo");
    }

    @Test
    void anUnknownProviderNameListsTheChoices() {
        final EngineConfig config = FabricFixture.config("nonexistent", 1, Map.of());

        assertThat(transport.unavailabilityCause(config))
                .contains("'nonexistent'")
                .contains("efa, tcp, shm, verbs");
        assertThatThrownBy(() -> transport.openDomain(new DomainContext(config, 0, 0, new RecordingDomainListener())))
                .isInstanceOf(TransportUnavailableException.class)
                .hasMessageContaining("nonexistent");
    }

    @ParameterizedTest
    @ValueSource(strings = {"efa", "verbs"})
    void aProviderWithoutHardwareIsReportedUnavailableWithItsName(final String provider) {
        final String cause = transport.unavailabilityCause(FabricFixture.config(provider, 1, Map.of()));
        org.junit.jupiter.api.Assumptions.assumeTrue(cause != null, "this machine has " + provider + " hardware");

        assertThat(cause).containsAnyOf(provider, "too old");
        assertThatThrownBy(() -> transport.openDomain(new DomainContext(
                        FabricFixture.config(provider, 1, Map.of()), 0, 0, new RecordingDomainListener())))
                .isInstanceOf(TransportUnavailableException.class);
    }

    @Test
    void tcpIsAvailableWhereLibfabricIsInstalled() {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                java.nio.file.Files.exists(java.nio.file.Path.of("/usr/include/rdma/fabric.h")),
                "needs libfabric installed (libfabric-dev)");

        assertThat(transport.unavailabilityCause(FabricFixture.config("tcp", 1, Map.of())))
                .isNull();
    }

    @Test
    void shmBefore119IsRefusedAtStartNamingTheVersionAndTheFix() {
        assertThat(FabricProvider.SHM.negotiate(FabricLibrary.version(1, 18))).isEqualTo(-1);
        assertThat(FabricProvider.SHM.negotiate(FabricLibrary.version(1, 19))).isEqualTo(FabricLibrary.version(1, 19));
        final String library = FabricFixture.library();
        org.junit.jupiter.api.Assumptions.assumeTrue(
                library != null && FabricLibrary.open(library).unavailabilityCause() == null, "needs a libfabric");
        final int version = FabricLibrary.open(library).version();
        final String cause = transport.unavailabilityCause(FabricFixture.config("shm", 1, Map.of()));
        if (version >= FabricLibrary.version(1, 19)) {
            assertThat(cause).isNull();
            return;
        }
        assertThat(cause)
                .contains("libfabric " + FabricLibrary.versionText(version), "needs API 1.19", "fabric.library")
                .contains("fabric.provider=tcp");
        assertThatThrownBy(() -> transport.openDomain(new DomainContext(
                        FabricFixture.config("shm", 1, Map.of()), 0, 0, new RecordingDomainListener())))
                .isInstanceOf(TransportUnavailableException.class)
                .hasMessageContaining("needs API 1.19");
    }

    @Test
    void efaNeedsApi118AndTheOthersAskForTheNewestUpTo122() {
        assertThat(FabricProvider.EFA.negotiate(FabricLibrary.version(1, 17))).isEqualTo(-1);
        assertThat(FabricProvider.EFA.negotiate(FabricLibrary.version(1, 20))).isEqualTo(FabricLibrary.version(1, 20));
        assertThat(FabricProvider.TCP.negotiate(FabricLibrary.version(1, 17))).isEqualTo(FabricLibrary.version(1, 17));
        assertThat(FabricProvider.SHM.negotiate(FabricLibrary.version(2, 1))).isEqualTo(FabricLibrary.version(1, 22));
    }
}
