package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * A second process for fault tests: opens one fabric domain with the provider named in {@code args[0]}, registers
 * {@code args[1]} bytes, prints {@code READY <address> <base> <rkey>} and then drives the domain until killed. On
 * stdin it answers {@code IMMS <imm> <after>}: once imm {@code after} arrived, it prints {@code IMMS <count>}, how
 * many imms {@code imm} arrived before it.
 */
public final class FabricPeerProcess {

    private FabricPeerProcess() {}

    public static void main(final String[] args) {
        final RecordingDomainListener events = new RecordingDomainListener();
        try (FabricFixture fixture = new FabricFixture();
                Arena arena = Arena.ofShared()) {
            final Domain domain = fixture.open(args[0], 0, events);
            final MemorySegment region = arena.allocate(Long.parseLong(args[1]), 4096);
            final long rkey = domain.register(region, Device.host());
            System.out.println("READY " + domain.address() + " " + region.address() + " " + rkey);
            System.out.flush();
            Thread.ofPlatform().daemon().start(() -> answer(events));
            while (true) {
                domain.poll();
            }
        }
    }

    /** Answers the test's questions about the imms the domain reported (another thread polls it). */
    private static void answer(final RecordingDomainListener events) {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                final String[] command = line.split(" ", -1);
                final int imm = Integer.parseInt(command[1]);
                final int after = Integer.parseInt(command[2]);
                while (!events.imms.contains(after)) {
                    Thread.sleep(1);
                }
                final long count = events.imms.subList(0, events.imms.indexOf(after)).stream()
                        .filter(i -> i == imm)
                        .count();
                System.out.println("IMMS " + count);
                System.out.flush();
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
