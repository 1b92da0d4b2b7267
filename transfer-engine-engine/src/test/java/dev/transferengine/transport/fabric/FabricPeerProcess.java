package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;

import org.jspecify.annotations.Nullable;

/**
 * A second process for fault tests: opens one fabric domain with the provider named in {@code args[0]}, registers
 * {@code args[1]} bytes, prints {@code READY <address> <base> <rkey>} and then drives the domain until killed. On
 * stdin it answers:
 *
 * <ul>
 *   <li>{@code IMMS <imm> <after>}: once imm {@code after} arrived, {@code IMMS <count>}, how many imms {@code imm}
 *       arrived before it;
 *   <li>{@code WRITE <token> <address> <base> <rkey> <length> <imm>}: writes the first {@code length} bytes of its
 *       region there with that imm, and once it ended {@code ENDED <token> ok} or {@code ENDED <token> <exception>};
 *   <li>{@code SEND <token> <address> <length>}: sends {@code length} bytes of its region, answered the same way;
 *   <li>{@code CANCEL <token>}: gives up on the operation as the engine's timeout does ({@link Domain#cancel}),
 *       answered {@code CANCELLED <token>} once it ran;
 *   <li>{@code FAILURE}: {@code FAILURE none}, or {@code FAILURE <why>} once the domain failed;
 *   <li>{@code TRAFFIC <millis> <timeout millis> <address>,<base>,<rkey>...}: sends and imm writes to those peers for
 *       that long ({@link FabricTraffic}), and once every operation ended and every receive buffer came back
 *       {@code TRAFFIC <how they ended>}.
 * </ul>
 *
 * <p>A write or send is answered once it ended, while later commands are taken meanwhile.
 */
public final class FabricPeerProcess {

    private FabricPeerProcess() {}

    /** Records what the domain reports and hands what belongs to the traffic running (if any) to it. */
    private static final class PeerEvents extends RecordingDomainListener {
        /** The traffic running; the polling thread only. */
        @Nullable FabricTraffic traffic;

        @Override
        public void onComplete(final long token, final long bytes) {
            if (traffic != null && FabricTraffic.owns(token)) {
                traffic.onComplete(token, bytes);
            } else {
                super.onComplete(token, bytes);
            }
        }

        @Override
        public void onFailed(final long token, final TransferEngineException error) {
            if (traffic != null && FabricTraffic.owns(token)) {
                traffic.onFailed(token, error);
            } else {
                super.onFailed(token, error);
            }
        }

        @Override
        public void onReceive(final long token, final int length) {
            if (traffic != null && FabricTraffic.owns(token)) {
                traffic.onReceive(token, length);
            } else {
                super.onReceive(token, length);
            }
        }

        @Override
        public void onReceiveWithdrawn(final long token) {
            if (traffic != null && FabricTraffic.owns(token)) {
                traffic.onReceiveWithdrawn(token);
            }
        }

        @Override
        public void onImm(final long reservation) {
            if ((reservation & FabricTraffic.IMM_MARK) == 0) {
                super.onImm(reservation); // the traffic's are not kept: there are thousands
            }
        }
    }

    public static void main(final String[] args) {
        final PeerEvents events = new PeerEvents();
        final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
        try (FabricFixture fixture = new FabricFixture();
                Arena arena = Arena.ofShared()) {
            final Domain domain = fixture.open(args[0], 0, events);
            final MemorySegment region = arena.allocate(Long.parseLong(args[1]), 4096);
            final long rkey = domain.register(region, Device.host());
            System.out.println("READY " + domain.address() + " " + region.address() + " " + rkey);
            System.out.flush();
            final Posting posting = new Posting(domain, region, rkey);
            Thread.ofPlatform().daemon().start(() -> answer(events, tasks, posting));
            while (true) {
                for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
                    task.run();
                }
                domain.poll();
                final FabricTraffic traffic = events.traffic;
                if (traffic != null && traffic.step()) {
                    System.out.println("TRAFFIC " + traffic.result());
                    System.out.flush();
                    events.traffic = null;
                    traffic.close();
                }
            }
        }
    }

    /** What a command posts from: the domain (its polling thread only) and the registered region. */
    private record Posting(Domain domain, MemorySegment region, long rkey) {}

    /** Answers the test's commands (another thread polls the domain and runs what they post). */
    private static void answer(
            final PeerEvents events, final ConcurrentLinkedQueue<Runnable> tasks, final Posting posting) {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                final String[] command = line.split(" ", -1);
                switch (command[0]) {
                    case "WRITE" -> {
                        final long token = Long.parseLong(command[1]);
                        tasks.add(() -> posting.domain.write(new WriteDescriptor()
                                .token(token)
                                .source(posting.region, 0, posting.rkey, Long.parseLong(command[5]))
                                .target(
                                        posting.domain.resolve(NetworkAddress.parse(command[2])),
                                        Long.parseLong(command[3]),
                                        0,
                                        Long.parseLong(command[4]))
                                .imm(true, Integer.parseInt(command[6]))));
                        Thread.ofVirtual().start(() -> awaitEnd(events, token));
                    }
                    case "SEND" -> {
                        final long token = Long.parseLong(command[1]);
                        tasks.add(() -> posting.domain.send(
                                token,
                                posting.domain.resolve(NetworkAddress.parse(command[2])),
                                posting.region.asSlice(0, Long.parseLong(command[3]))));
                        Thread.ofVirtual().start(() -> awaitEnd(events, token));
                    }
                    case "CANCEL" -> {
                        final long token = Long.parseLong(command[1]);
                        final CountDownLatch ran = new CountDownLatch(1);
                        tasks.add(() -> {
                            posting.domain.cancel(token);
                            ran.countDown();
                        });
                        ran.await();
                        System.out.println("CANCELLED " + token);
                    }
                    case "FAILURE" -> {
                        final String failure = posting.domain.failure();
                        System.out.println("FAILURE " + (failure == null ? "none" : failure.replace('\n', ' ')));
                    }
                    case "TRAFFIC" -> {
                        final List<FabricTraffic.Target> targets = new ArrayList<>();
                        for (int i = 3; i < command.length; i++) {
                            targets.add(FabricTraffic.Target.parse(command[i]));
                        }
                        tasks.add(() -> {
                            final FabricTraffic traffic = new FabricTraffic(
                                    posting.domain,
                                    posting.region,
                                    posting.rkey,
                                    targets,
                                    Long.parseLong(command[1]),
                                    Long.parseLong(command[2]));
                            events.traffic = traffic;
                            traffic.start();
                        });
                    }
                    default -> {
                        final int imm = Integer.parseInt(command[1]);
                        final int after = Integer.parseInt(command[2]);
                        while (!events.imms.contains(after)) {
                            Thread.sleep(1);
                        }
                        final long count = events.imms.subList(0, events.imms.indexOf(after)).stream()
                                .filter(i -> i == imm)
                                .count();
                        System.out.println("IMMS " + count);
                    }
                }
                System.out.flush();
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void awaitEnd(final RecordingDomainListener events, final long token) {
        while (!events.ended(token)) {
            try {
                Thread.sleep(1);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        final TransferEngineException error = events.failed.get(token);
        System.out.println("ENDED " + token + " "
                + (error == null ? "ok" : error.toString().replace('\n', ' ')));
        System.out.flush();
    }
}
