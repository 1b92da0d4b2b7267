package dev.transferengine.transport.tcp;

import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.Transport;

import java.util.Map;
import java.util.ServiceLoader;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TcpTransportTest {

    @Test
    void isFoundByTheServiceLoaderAndRanksBehindNativeTransports() {
        assertThat(ServiceLoader.load(Transport.class).stream().map(ServiceLoader.Provider::get))
                .filteredOn(t -> t.name().equals("tcp"))
                .singleElement()
                .satisfies(tcp -> {
                    assertThat(tcp).isInstanceOf(TcpTransport.class);
                    assertThat(tcp.autoPreference()).isEqualTo(100);
                    assertThat(tcp.unavailabilityCause(TcpDomains.config(0, Map.of())))
                            .isNull();
                });
    }

    @Test
    void aBadSocketBufferOptionIsReportedAsTheCause() {
        final TcpTransport tcp = new TcpTransport();
        assertThat(tcp.unavailabilityCause(TcpDomains.config(0, Map.of(TcpTransport.SOCKET_BUFFER_OPTION, "lots"))))
                .contains("tcp.socketBufferBytes")
                .contains("'lots'");
        assertThat(tcp.unavailabilityCause(TcpDomains.config(0, Map.of(TcpTransport.SOCKET_BUFFER_OPTION, "-1"))))
                .contains("between 0 and");
        assertThatThrownBy(() -> tcp.openDomain(new DomainContext(
                        TcpDomains.config(0, Map.of(TcpTransport.SOCKET_BUFFER_OPTION, "lots")),
                        0,
                        0,
                        new RecordingDomainListener())))
                .isInstanceOf(TransportUnavailableException.class)
                .hasMessageContaining("'lots'");
    }

    @Test
    void eachNicOfAGroupListensOnItsOwnPort() {
        try (TcpDomain nic0 = TcpDomains.open(new RecordingDomainListener(), 0);
                TcpDomain nic1 = TcpDomains.open(new RecordingDomainListener(), 1)) {
            assertThat(TcpDomains.port(nic0)).isNotEqualTo(TcpDomains.port(nic1));
            assertThat(nic0.address()).isNotEqualTo(nic1.address());
            assertThat(nic0.failure()).isNull();
        }
    }
}
