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
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The receiving process of {@link FabricLargeMessageTest}: opens a tcp domain, posts one receive buffer of
 * {@code args[0]} bytes (token 1), prints {@code READY <address>}, and drives the domain until killed. For each
 * message a buffer took it prints {@code RECEIVED <token> <length> <last byte>}. On the line {@code REPOST} on stdin
 * it posts the buffer again (token 2), after the first message was delivered.
 */
public final class FabricLargeMessageReceiver {

    private FabricLargeMessageReceiver() {}

    public static void main(final String[] args) {
        final int size = Integer.parseInt(args[0]);
        final RecordingDomainListener events = new RecordingDomainListener();
        final AtomicBoolean repost = new AtomicBoolean();
        try (FabricFixture fixture = new FabricFixture();
                Arena arena = Arena.ofShared()) {
            final Domain domain = fixture.open("tcp", 0, events);
            final MemorySegment buffer = arena.allocate(size, 64);
            domain.postReceive(1, buffer);
            System.out.println("READY " + domain.address());
            System.out.flush();
            Thread.ofPlatform().daemon().start(() -> awaitRepost(repost));
            boolean reposted = false;
            int reported = 0;
            while (true) {
                domain.poll();
                if (events.receives.size() > reported) {
                    reported++;
                    final long token = reported;
                    System.out.println("RECEIVED " + token + " " + events.receives.get(token) + " "
                            + buffer.get(ValueLayout.JAVA_BYTE, size - 1));
                    System.out.flush();
                }
                if (!reposted && reported == 1 && repost.get()) {
                    reposted = true;
                    domain.postReceive(2, buffer);
                }
            }
        }
    }

    private static void awaitRepost(final AtomicBoolean repost) {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("REPOST")) {
                    repost.set(true);
                }
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
