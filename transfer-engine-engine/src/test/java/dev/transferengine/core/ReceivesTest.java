package dev.transferengine.core;

import dev.transferengine.TransferEngine;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class ReceivesTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aClosedPoolFreesItsMemoryOnceTheNicAndTheListenerGaveBackEveryBuffer() throws Exception {
        try (TransferEngine sender = EngineTest.tcp();
                TransferEngine receiver = EngineTest.tcp()) {
            final CountDownLatch entered = new CountDownLatch(1);
            final CountDownLatch release = new CountDownLatch(1);
            final AtomicReference<MemorySegment> held = new AtomicReference<>();
            final Receives pool = (Receives) receiver.postedReceivePool(64, 4, message -> {
                held.set(message);
                entered.countDown();
                try {
                    release.await(); // the listener holds its buffer while the pool closes
                } catch (final InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            sender.send(receiver.mainAddress(), "held".getBytes()).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

            pool.close();
            await().atMost(WAIT).until(() -> pool.available() == 0);
            assertThat(pool.freed()).as("one buffer is still with the listener").isFalse();
            assertThat(held.get().scope().isAlive()).isTrue();

            release.countDown();
            await().atMost(WAIT).until(pool::freed);
            assertThat(held.get().scope().isAlive()).as("the pool's memory").isFalse();
        }
    }
}
