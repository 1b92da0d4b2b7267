package dev.transferengine.boot.test;

import dev.transferengine.NetworkAddress;
import dev.transferengine.TransferEngine;
import dev.transferengine.reactive.ReactiveTransferEngine;

/**
 * The other half of the loopback engine pair: a second tcp engine on 127.0.0.1 under the same
 * {@link LoopbackClusterKey} as the application's engine, for the test to write to, send to and receive from the
 * application. The application context owns it and closes it when it closes.
 */
public final class LoopbackPeer implements AutoCloseable {

    private final TransferEngine engine;
    private final ReactiveTransferEngine reactive;

    LoopbackPeer(final TransferEngine engine) {
        this.engine = engine;
        this.reactive = new ReactiveTransferEngine(engine);
    }

    /**
     * The peer's engine.
     *
     * @return the engine, tcp on 127.0.0.1
     */
    public TransferEngine engine() {
        return engine;
    }

    /**
     * A Reactor view of the peer's engine.
     *
     * @return the facade over {@link #engine()}
     */
    public ReactiveTransferEngine reactive() {
        return reactive;
    }

    /**
     * Where the application sends to reach the peer.
     *
     * @return the peer's main address
     */
    public NetworkAddress address() {
        return engine.mainAddress();
    }

    /** Closes the peer's engine; the application context calls this when it closes. */
    @Override
    public void close() {
        engine.close();
    }
}
