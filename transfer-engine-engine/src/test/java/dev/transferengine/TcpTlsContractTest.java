package dev.transferengine;

import dev.transferengine.test.TlsFixture;
import dev.transferengine.test.TransportContract;

import java.time.Duration;

/**
 * The transport contract on the tcp transport with mutual TLS under the cluster-key handshake. The drain bound is
 * raised: encryption runs at a few hundred MB/s before the JIT compiled it, and the drain test moves 50 MiB.
 */
class TcpTlsContractTest extends TransportContract {

    @Override
    protected TransferEngineBuilder configure(final TransferEngineBuilder builder) {
        return builder.transport("tcp")
                .bindAddress("127.0.0.1")
                .tls(TlsFixture.trusted())
                .drainTimeout(Duration.ofSeconds(30));
    }
}
