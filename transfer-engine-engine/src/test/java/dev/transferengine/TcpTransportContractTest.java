package dev.transferengine;

import dev.transferengine.test.TransportContract;

/** The transport contract on the pure-Java tcp transport. */
class TcpTransportContractTest extends TransportContract {

    @Override
    protected TransferEngineBuilder configure(final TransferEngineBuilder builder) {
        return builder.transport("tcp").bindAddress("127.0.0.1");
    }
}
