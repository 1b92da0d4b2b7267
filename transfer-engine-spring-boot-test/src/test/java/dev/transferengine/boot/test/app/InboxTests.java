package dev.transferengine.boot.test.app;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.SingleWrite;
import dev.transferengine.boot.test.AutoConfigureTransferEngineLoopback;
import dev.transferengine.boot.test.LoopbackPeer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import reactor.test.StepVerifier;

/** A test as an application writes one, against its own {@link Inbox}, with the loopback peer as the sender. */
@SpringBootTest(classes = InboxApplication.class)
@AutoConfigureTransferEngineLoopback
class InboxTests {

    private final Arena arena = Arena.ofShared();

    @Autowired
    private Inbox inbox;

    @Autowired
    private LoopbackPeer peer;

    @AfterEach
    void freeArena() {
        arena.close();
    }

    @Test
    void aWriteFromAPeerCanBeReadInTheInbox() {
        final byte[] text = "hello, inbox".getBytes(StandardCharsets.UTF_8);
        final MemorySegment bytes = arena.allocate(4096, 4096);
        MemorySegment.copy(MemorySegment.ofArray(text), 0, bytes, 0, text.length);
        final MemoryRegion source = peer.engine().register(bytes, Device.host());

        StepVerifier.create(peer.reactive()
                        .write(SingleWrite.of(source, 0, text.length, inbox.descriptor(), 0)
                                .withImm(9))
                        .then(inbox.read(9, text.length)))
                .expectNext("hello, inbox")
                .expectComplete()
                .verify(Duration.ofSeconds(30));
        peer.engine().deregister(source);
    }
}
