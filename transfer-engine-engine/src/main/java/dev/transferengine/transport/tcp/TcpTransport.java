package dev.transferengine.transport.tcp;

import dev.transferengine.EngineConfig;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.Transport;

import org.jspecify.annotations.Nullable;

/**
 * The pure-Java transport: every NIC is a listening TCP socket with its own connections, driven by non-blocking
 * NIO from the group's worker. Always available, and ranked behind native transports for {@code auto}.
 *
 * <p>Option {@value #SOCKET_BUFFER_OPTION}: bytes of SO_SNDBUF and SO_RCVBUF per socket, or 0 (the default) for the
 * kernel's auto-tuning, as iperf3 runs. A fixed size turns the tuning off for good and is capped at
 * {@code net.core.rmem_max}/{@code wmem_max} (208 KiB on a stock kernel, so a request for MiBs can get less than
 * the tuning would grow to: {@code net.ipv4.tcp_rmem}/{@code tcp_wmem}); set one only to pin the memory per
 * socket. Auto-tuning measured 1.03-1.20x the former fixed 4 MiB for one NIC on loopback (docs/benchmarks.md).
 * Options {@code tcp.stagingChunkBytes} (default 4 MiB) and {@code tcp.stagingChunks}
 * (default 4, at least 2): the pinned chunks per direction and NIC that device memory is staged through.
 */
public final class TcpTransport implements Transport {

    /** The transport's name, also the transport name inside its addresses. */
    public static final String NAME = "tcp";
    /** Engine option naming the socket buffer size in bytes. */
    public static final String SOCKET_BUFFER_OPTION = TcpSettings.SOCKET_BUFFER;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int autoPreference() {
        return 100;
    }

    @Override
    public @Nullable String unavailabilityCause(final EngineConfig config) {
        try {
            TcpSettings.of(config);
        } catch (final IllegalArgumentException e) {
            return e.getMessage();
        }
        return TcpStaging.optionProblem(config);
    }

    /**
     * Opens one NIC, bound to the configured address and port. Called on the group's worker; binding does not block.
     *
     * @throws TransportUnavailableException if the option is invalid or the port cannot be bound
     */
    @Override
    public Domain openDomain(final DomainContext context) {
        final String cause = unavailabilityCause(context.config());
        if (cause != null) {
            throw new TransportUnavailableException(NAME, cause);
        }
        return TcpDomain.open(context, TcpSettings.of(context.config()), System::nanoTime);
    }
}
