package dev.transferengine.boot.test.app;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

/** Application code under test that sends: writes a text into a peer's region and announces it with an imm. */
@Service
public class Outbox implements DisposableBean {

    private static final int SIZE = 4096;

    private final TransferEngine engine;
    private final ReactiveTransferEngine reactive;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion staging;

    Outbox(final TransferEngine engine, final ReactiveTransferEngine reactive) {
        this.engine = engine;
        this.reactive = reactive;
        this.staging = engine.register(arena.allocate(SIZE, SIZE), Device.host());
    }

    /** Writes {@code text} to offset 0 of {@code target} with {@code imm}; completes when it landed. */
    public Mono<Void> deliver(final RegionDescriptor target, final String text, final int imm) {
        return Mono.defer(() -> {
            final byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            MemorySegment.copy(MemorySegment.ofArray(bytes), 0, staging.segment(), 0, bytes.length);
            return reactive.write(
                    SingleWrite.of(staging, 0, bytes.length, target, 0).withImm(imm));
        });
    }

    /** As {@link Inbox#destroy()}: the region is gone with the engine, or deregistered here; then the memory. */
    @Override
    public void destroy() {
        try {
            engine.deregister(staging);
        } catch (final EngineClosedException e) {
            // closed first, which deregistered the region
        }
        arena.close();
    }
}
