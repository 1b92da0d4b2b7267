package dev.transferengine.sample.demo;

import dev.transferengine.TransferEngine;
import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.sample.SampleProperties;
import dev.transferengine.sample.kv.DecodeNode;
import dev.transferengine.sample.kv.KvLayout;

/**
 * The decode half of the demo: its own engine on the loopback interface, so that the demo's pages really cross
 * sockets between two engines, as they would between two machines. The starter's engine serves the prefill half.
 */
final class DemoDecode implements AutoCloseable {

    private final TransferEngine engine;
    private final DecodeNode node;

    /**
     * Opens the engine (tcp transport, ephemeral port) and the decode node's page pool.
     *
     * @param kv the cache's layout
     */
    DemoDecode(final SampleProperties.Kv kv) {
        this.engine = TransferEngine.builder().transport("tcp").bindAddress("127.0.0.1").basePort(0).build();
        try {
            this.node = new DecodeNode(new ReactiveTransferEngine(engine), KvLayout.of(kv), kv.receiveTimeout());
        } catch (final RuntimeException e) {
            engine.close();
            throw e;
        }
    }

    DecodeNode node() {
        return node;
    }

    @Override
    public void close() {
        try {
            node.close();
        } finally {
            engine.close();
        }
    }
}
