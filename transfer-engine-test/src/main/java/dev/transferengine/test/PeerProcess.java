package dev.transferengine.test;

import dev.transferengine.Device;
import dev.transferengine.ImmCounter;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.TransportEvent;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A receiving engine in its own JVM, driven over stdin/stdout by {@link PeerProcesses}, so tests cross a real
 * process boundary. Prints {@code READY <mainAddress> <mrdesc>}, then answers line commands:
 * {@code AWAIT <imm> <count>} (waits for the credits, then prints {@code COUNTED <imm> <balance-after>}),
 * {@code CRC} (prints {@code CRC <crc32c of the region>}), {@code RECEIVED <n>} (waits for {@code n} messages,
 * then prints {@code RECEIVED <count> <bytes>}), {@code HEALTH} (prints {@code HEALTH <healthy> <events>}, the
 * transport events that are not zero as {@code category/reason=count,...} or {@code -}), {@code HEAP} (collects
 * garbage, then prints {@code HEAP <used bytes> <max bytes>}).
 *
 * <p>Arguments: {@code transport nics regionBytes [key=value options...]}; the option {@code bindAddress=ADDR} sets
 * the engine's bind address, {@code tlsKeyStore=PATH} turns on mutual TLS with that identity (see
 * {@link TlsFixture#trustedFrom}), every other one goes to {@link TransferEngineBuilder#option}.
 */
public final class PeerProcess {

    private PeerProcess() {}

    /** {@code category/reason=count,...} of the counts that are not zero. */
    private static String events(final TransferEngine engine) {
        final StringBuilder text = new StringBuilder();
        for (final TransportEvent event : engine.transportEvents()) {
            if (event.count() > 0) {
                text.append(text.isEmpty() ? "" : ",")
                        .append(event.category())
                        .append('/')
                        .append(event.reason())
                        .append('=')
                        .append(event.count());
            }
        }
        return text.isEmpty() ? "-" : text.toString();
    }

    /**
     * Runs the peer: {@code transport nics regionBytes [key=value...]}, then answers commands on stdin.
     *
     * @param args the transport, NIC count, region size and options
     * @throws Exception if the engine cannot start; the parent sees the process end
     */
    public static void main(final String[] args) throws Exception {
        final TransferEngineBuilder builder =
                TransferEngine.builder().transport(args[0]).group(Integer.parseInt(args[1]));
        for (int i = 3; i < args.length; i++) {
            final String[] option = args[i].split("=", 2);
            switch (option[0]) {
                case "bindAddress" -> builder.bindAddress(option[1]);
                case "tlsKeyStore" -> builder.tls(TlsFixture.trustedFrom(Path.of(option[1])));
                default -> builder.option(option[0], option[1]);
            }
        }
        try (TransferEngine engine = builder.build();
                Arena arena = Arena.ofShared()) {
            final MemorySegment region = arena.allocate(Long.parseLong(args[2]), 4096);
            final RegionDescriptor desc = engine.register(region, Device.host()).descriptor();
            final AtomicLong messages = new AtomicLong();
            final AtomicLong bytes = new AtomicLong();
            engine.postedReceivePool(4096, 64, message -> {
                messages.incrementAndGet();
                bytes.addAndGet(message.byteSize());
            });
            System.out.println("READY " + engine.mainAddress() + " " + desc.toText());
            final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                final String[] command = line.split(" ", -1);
                switch (command[0]) {
                    case "AWAIT" -> {
                        final ImmCounter counter = engine.immCounter(Integer.parseInt(command[1]));
                        counter.await(Long.parseLong(command[2]), Duration.ofMinutes(2));
                        System.out.println("COUNTED " + command[1] + " " + counter.balance());
                    }
                    case "CRC" -> System.out.println("CRC " + Checksums.crc32c(region));
                    case "HEALTH" -> System.out.println("HEALTH " + engine.isHealthy() + " " + events(engine));
                    case "HEAP" -> {
                        System.gc();
                        final MemoryUsage heap =
                                ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
                        System.out.println("HEAP " + heap.getUsed() + " " + heap.getMax());
                    }
                    case "RECEIVED" -> {
                        // sends complete when the message landed; the listener counts it a moment later
                        final long expected = Long.parseLong(command[1]);
                        final long deadline =
                                System.nanoTime() + Duration.ofSeconds(60).toNanos();
                        while (messages.get() < expected && System.nanoTime() - deadline < 0) {
                            Thread.sleep(1);
                        }
                        System.out.println("RECEIVED " + messages.get() + " " + bytes.get());
                    }
                    case "EXIT" -> {
                        return;
                    }
                    default -> System.out.println("ERROR unknown command " + line);
                }
            }
        }
    }
}
