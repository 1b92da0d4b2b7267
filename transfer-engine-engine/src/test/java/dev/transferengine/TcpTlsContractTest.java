package dev.transferengine;

import dev.transferengine.test.TlsFixture;
import dev.transferengine.test.TransportContract;

/**
 * The transport contract on the tcp transport with mutual TLS under the cluster-key handshake.
 */
class TcpTlsContractTest extends TransportContract {

    @Override
    protected TransferEngineBuilder configure(final TransferEngineBuilder builder) {
        return builder.transport("tcp").bindAddress("127.0.0.1").tls(TlsFixture.trusted());
    }
}
