package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The receiving process of {@link FabricSendsDoneAtCloseTest}: opens a tcp domain, posts {@code args[0]} receive
 * buffers of {@code args[1]} bytes, prints {@code READY <address>} and polls the domain until killed. On stdin:
 *
 * <ul>
 *   <li>{@code PEER <address>}: sends 8 bytes to that peer (whose pool sizes it asks first) and prints
 *       {@code PEERED} once the send ended;
 *   <li>{@code HOLD}: stops polling (its provider reads nothing more from its sockets) and prints {@code HOLDING};
 *   <li>{@code SEND}: posts another 8 bytes to the peer without polling, and prints {@code SENT};
 *   <li>{@code RESUME}: polls again;
 *   <li>{@code REPORT <n>}: polls until {@code n} messages came or 20 s passed, and 500 ms more (a repeat would come
 *       meanwhile), then prints {@code RECEIVED <each message's first int, in arrival order>}.
 * </ul>
 */
public final class FabricHeldReceiver {

    private static final long TO_PEER = 1L << 40;

    private FabricHeldReceiver() {}

    public static void main(final String[] args) throws InterruptedException {
        final int buffers = Integer.parseInt(args[0]);
        final int size = Integer.parseInt(args[1]);
        final RecordingDomainListener events = new RecordingDomainListener();
        final BlockingQueue<String> commands = new LinkedBlockingQueue<>();
        try (FabricFixture fixture = new FabricFixture();
                Arena arena = Arena.ofShared()) {
            final Domain domain = fixture.open("tcp", 0, events);
            final MemorySegment received = arena.allocate((long) buffers * size, 64);
            for (int i = 0; i < buffers; i++) {
                domain.postReceive(i, received.asSlice((long) i * size, size));
            }
            final MemorySegment toPeer = arena.allocate(8, 8);
            System.out.println("READY " + domain.address());
            System.out.flush();
            Thread.ofPlatform().daemon().start(() -> readCommands(commands));
            long peer = -1;
            boolean peering = false;
            boolean polling = true;
            int reportAfter = -1;
            long giveUp = 0;
            long reportAt = 0;
            while (true) {
                if (polling) {
                    domain.poll();
                } else {
                    Thread.sleep(1);
                }
                final String command = commands.poll();
                if (command != null && command.startsWith("PEER ")) {
                    peer = domain.resolve(NetworkAddress.parse(command.substring(5)));
                    domain.send(TO_PEER, peer, toPeer);
                    peering = true;
                } else if ("HOLD".equals(command)) {
                    polling = false;
                    System.out.println("HOLDING");
                } else if ("SEND".equals(command)) {
                    domain.send(TO_PEER + 1, peer, toPeer);
                    System.out.println("SENT");
                } else if ("RESUME".equals(command)) {
                    polling = true;
                } else if (command != null && command.startsWith("REPORT ")) {
                    reportAfter = Integer.parseInt(command.substring(7));
                    giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                }
                if (peering && events.ended(TO_PEER)) {
                    peering = false;
                    System.out.println("PEERED");
                }
                System.out.flush();
                final long now = System.nanoTime();
                if (reportAfter >= 0 && reportAt == 0 && (events.receives.size() >= reportAfter || now - giveUp > 0)) {
                    reportAt = now + TimeUnit.MILLISECONDS.toNanos(500);
                }
                if (reportAt != 0 && now - reportAt > 0) {
                    System.out.println("RECEIVED " + firstInts(events, received, size));
                    System.out.flush();
                    reportAt = 0;
                    reportAfter = -1;
                }
            }
        }
    }

    private static List<Integer> firstInts(
            final RecordingDomainListener events, final MemorySegment received, final int size) {
        final List<Integer> firsts = new ArrayList<>();
        synchronized (events.receives) {
            for (final long token : events.receives.keySet()) {
                firsts.add(received.get(ValueLayout.JAVA_INT, token * size));
            }
        }
        return firsts;
    }

    private static void readCommands(final BlockingQueue<String> commands) {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                commands.add(line.strip());
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
