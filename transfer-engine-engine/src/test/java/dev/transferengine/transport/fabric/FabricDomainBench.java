package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.spi.Domain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * Domain-level figures, not a test: 1 MiB writes with imm (window 64) in GB/s, and 8-byte write-with-imm ping-pong
 * latency, between two domains of one process driven by one thread (both sides need polling: manual progress).
 * Usage: {@code FabricDomainBench <provider> [writes] [pingPongs] [deliveryComplete]}.
 */
public final class FabricDomainBench {

    private static final long SIZE = 1 << 20;
    private static final int WINDOW = 64;

    private FabricDomainBench() {}

    public static void main(final String[] args) {
        final String provider = args.length > 0 ? args[0] : "shm";
        final int writes = args.length > 1 ? Integer.parseInt(args[1]) : 5000;
        final int pingPongs = args.length > 2 ? Integer.parseInt(args[2]) : 20000;
        final Map<String, String> options =
                Map.of(FabricTransport.DELIVERY_COMPLETE_OPTION, args.length > 3 ? args[3] : "true");
        final CountingDomainListener a = new CountingDomainListener();
        final CountingDomainListener b = new CountingDomainListener();
        try (FabricFixture fixture = new FabricFixture();
                Arena arena = Arena.ofShared()) {
            final Domain left = fixture.open(FabricFixture.config(provider, 1, options), 0, a);
            final Domain right = fixture.open(FabricFixture.config(provider, 1, options), 0, b);
            final MemorySegment src = arena.allocate(SIZE, 4096);
            final MemorySegment dst = arena.allocate(SIZE, 4096);
            final long srcKey = left.register(src, Device.host());
            final long dstKey = right.register(dst, Device.host());
            final long leftKey = left.register(dst, Device.host());
            final long rightKey = right.register(src, Device.host());
            final long toRight = left.resolve(right.address());
            final long toLeft = right.resolve(left.address());

            for (int round = 0; round < 2; round++) {
                a.done = 0;
                b.immCount = 0;
                int posted = 0;
                final long start = System.nanoTime();
                while (a.done < writes) {
                    while (posted < writes && posted - a.done < WINDOW) {
                        left.write(posted, src, 0, srcKey, SIZE, toRight, dst.address(), 0, dstKey, true, posted);
                        posted++;
                    }
                    left.poll();
                    right.poll();
                }
                final double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf(
                        "%s dc=%s round %d: %d x 1 MiB writes with imm, window %d: %.2f GB/s (%d failed)%n",
                        provider,
                        options.values(),
                        round,
                        writes,
                        WINDOW,
                        writes * (double) SIZE / seconds / 1e9,
                        a.failed);
            }

            for (int round = 0; round < 2; round++) {
                a.immCount = 0;
                b.immCount = 0;
                final long start = System.nanoTime();
                for (int i = 0; i < pingPongs; i++) {
                    left.write(i, src, 0, srcKey, 8, toRight, dst.address(), 0, dstKey, true, i);
                    while (b.immCount == i) {
                        left.poll();
                        right.poll();
                    }
                    right.write(i, src, 0, rightKey, 8, toLeft, dst.address(), 0, leftKey, true, i);
                    while (a.immCount == i) {
                        right.poll();
                        left.poll();
                    }
                }
                final double micros = (System.nanoTime() - start) / 1e3 / pingPongs;
                System.out.printf(
                        "%s dc=%s round %d: 8-byte imm ping-pong: %.2f us round trip, %.2f us one way%n",
                        provider, options.values(), round, micros, micros / 2);
            }
        }
    }
}
