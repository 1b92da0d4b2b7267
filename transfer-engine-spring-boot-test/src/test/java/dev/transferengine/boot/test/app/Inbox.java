package dev.transferengine.boot.test.app;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

/**
 * Application code under test: a region peers write text into, each message announced by an imm. It owns the arena
 * of its region and frees it after deregistering, before the engine closes.
 */
@Service
public class Inbox implements DisposableBean {

    private static final int SIZE = 4096;

    private final TransferEngine engine;
    private final ReactiveTransferEngine reactive;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion region;

    Inbox(final TransferEngine engine, final ReactiveTransferEngine reactive) {
        this.engine = engine;
        this.reactive = reactive;
        this.region = engine.register(arena.allocate(SIZE, SIZE), Device.host());
    }

    /** What a peer needs to write here. */
    public RegionDescriptor descriptor() {
        return region.descriptor();
    }

    /** The text of {@code length} bytes at offset 0, once the write announced by {@code imm} landed. */
    public Mono<String> read(final int imm, final int length) {
        return reactive.expectImm(imm, 1)
                .then(Mono.fromCallable(() -> new String(
                        region.segment().asSlice(0, length).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8)));
    }

    /**
     * The engine's lifecycle normally stopped it before beans are destroyed, and closing it dropped every region;
     * otherwise (a context that failed to start) the region is deregistered here. Only then is the memory freed.
     */
    @Override
    public void destroy() {
        try {
            engine.deregister(region);
        } catch (final EngineClosedException e) {
            // closed first, which deregistered the region
        }
        arena.close();
    }
}
