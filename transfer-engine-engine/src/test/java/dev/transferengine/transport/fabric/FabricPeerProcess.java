package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A second process for fault tests: opens one fabric domain with the provider named in {@code args[0]}, registers
 * {@code args[1]} bytes, prints {@code READY <address> <base> <rkey>} and then drives the domain until killed.
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
            while (true) {
                domain.poll();
            }
        }
    }
}
