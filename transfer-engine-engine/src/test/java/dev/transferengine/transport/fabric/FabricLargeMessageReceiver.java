package dev.transferengine.transport.fabric;

import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The receiving process of {@link FabricLargeMessageTest}: opens a tcp domain, posts one receive buffer of
 * {@code args[0]} bytes, prints {@code READY <address>}, and drives the domain until killed. On the line
 * {@code REPOST <n>} on stdin it posts the buffer again each time a message took it, until {@code n} messages came or
 * 20 s passed, polls 500 ms more, and prints {@code ALIVE <last byte of each message, in arrival order>}.
 */
public final class FabricLargeMessageReceiver {

    private FabricLargeMessageReceiver() {}

    public static void main(final String[] args) {
        final int size = Integer.parseInt(args[0]);
        final RecordingDomainListener events = new RecordingDomainListener();
        final AtomicInteger expected = new AtomicInteger(-1);
        try (FabricFixture fixture = new FabricFixture();
                Arena arena = Arena.ofShared()) {
            final Domain domain = fixture.open("tcp", 0, events);
            final MemorySegment buffer = arena.allocate(size, 64);
            long token = 1;
            domain.postReceive(token, buffer);
            System.out.println("READY " + domain.address());
            System.out.flush();
            Thread.ofPlatform().daemon().start(() -> awaitRepost(expected));
            final List<Byte> lastBytes = new ArrayList<>();
            boolean posted = true;
            long giveUp = 0;
            long reportAt = 0;
            boolean reported = false;
            while (true) {
                domain.poll();
                if (posted && events.receives.containsKey(token)) {
                    lastBytes.add(buffer.get(ValueLayout.JAVA_BYTE, size - 1));
                    posted = false;
                    token++;
                }
                if (expected.get() < 0) {
                    continue;
                }
                final long now = System.nanoTime();
                if (giveUp == 0) {
                    giveUp = now + TimeUnit.SECONDS.toNanos(20);
                }
                if (!posted) { // the sender closed: a message that waits for a buffer lands in this one
                    buffer.fill((byte) 0);
                    domain.postReceive(token, buffer);
                    posted = true;
                }
                if (reportAt == 0 && (lastBytes.size() >= expected.get() || now - giveUp > 0)) {
                    reportAt = now + TimeUnit.MILLISECONDS.toNanos(500);
                }
                if (!reported && reportAt != 0 && now - reportAt > 0) {
                    reported = true;
                    System.out.println("ALIVE " + lastBytes);
                    System.out.flush();
                }
            }
        }
    }

    private static void awaitRepost(final AtomicInteger expected) {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.startsWith("REPOST ")) {
                    expected.set(Integer.parseInt(line.substring(7)));
                }
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
