package com.example.kvapp;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.discovery.DescriptorRegistry;

import java.lang.foreign.Arena;
import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

@Component
class KvPool implements DisposableBean {
    private static final Logger LOG = LoggerFactory.getLogger(KvPool.class);
    private final Arena arena = Arena.ofShared();
    private final DescriptorRegistry registry;
    private final Disposable watch;

    KvPool(TransferEngine engine, DescriptorRegistry registry) {
        this.registry = registry;
        MemoryRegion pool = engine.register(arena.allocate(1 << 20, 4096), Device.host());
        registry.publish("kv-pool", pool).block(Duration.ofSeconds(10));   // start-up thread: blocking is fine
        watch = registry.watch().subscribe(change -> LOG.info("{} {}", change.kind(), change.name()));
    }

    Mono<RegionDescriptor> peerPool(String peer) {
        return registry.lookup(peer).map(found -> found.region("kv-pool"));   // empty: no live engine so named
    }

    @Override
    public void destroy() {
        watch.dispose();
        arena.close();   // the engine dropped the region when it closed
    }
}
