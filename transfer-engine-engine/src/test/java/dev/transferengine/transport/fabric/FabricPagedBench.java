package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.spi.Domain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * Domain-level figures for paged writes, not a test: requests of {@code pages} 1 KiB writes with imm each (as the
 * engine plans a paged write), {@code window} requests in flight, between two domains of one process driven by one
 * thread. The target is polled every pass, or only every {@code targetEveryMicros} (a target whose worker parks).
 * Usage: {@code FabricPagedBench <provider> [targetEveryMicros] [postsPerPoll] [seconds] [option=value...]}.
 */
public final class FabricPagedBench {

    private static final long PAGE = 1024;
    private static final int PAGES = 256;
    private static final int WINDOW = 16;

    private FabricPagedBench() {}

    public static void main(final String[] args) {
        final String provider = args.length > 0 ? args[0] : "shm";
        final long targetEveryNanos = (args.length > 1 ? Long.parseLong(args[1]) : 0) * 1000;
        final String postsPerPoll = args.length > 2 ? args[2] : "32";
        final double seconds = args.length > 3 ? Double.parseDouble(args[3]) : 3;
        final Map<String, String> options =
                new java.util.HashMap<>(Map.of(FabricTransport.POSTS_PER_POLL_OPTION, postsPerPoll));
        for (int i = 4; i < args.length; i++) {
            final String[] kv = args[i].split("=", 2);
            options.put(kv[0], kv[1]);
        }
        final CountingDomainListener a = new CountingDomainListener();
        final CountingDomainListener b = new CountingDomainListener();
        try (FabricFixture fixture = new FabricFixture();
                Arena arena = Arena.ofShared()) {
            final Domain left = fixture.open(FabricFixture.config(provider, 1, options), 0, a);
            final Domain right = fixture.open(FabricFixture.config(provider, 1, options), 0, b);
            final long bytes = PAGE * PAGES * WINDOW;
            final MemorySegment src = arena.allocate(bytes, 4096);
            final MemorySegment dst = arena.allocate(bytes, 4096);
            final long srcKey = left.register(src, Device.host());
            final long dstKey = right.register(dst, Device.host());
            final long toRight = left.resolve(right.address());
            final long perRequest = PAGES;
            for (int round = 0; round < 2; round++) {
                a.done = 0;
                long posted = 0;
                long polls = 0;
                long targetPolls = 0;
                final long start = System.nanoTime();
                long lastTarget = start;
                final long end = start + (long) (seconds * 1e9);
                long now = start;
                while (now < end) {
                    while (posted - a.done < perRequest * (WINDOW - 1)) {
                        final long slot = (posted / perRequest) % WINDOW;
                        for (int k = 0; k < PAGES; k++) {
                            final long offset = (slot * PAGES + k) * PAGE;
                            left.write(
                                    posted + k,
                                    src,
                                    offset,
                                    srcKey,
                                    PAGE,
                                    toRight,
                                    dst.address(),
                                    offset,
                                    dstKey,
                                    true,
                                    7);
                        }
                        posted += PAGES;
                    }
                    left.poll();
                    polls++;
                    now = System.nanoTime();
                    if (now - lastTarget >= targetEveryNanos) {
                        right.poll();
                        targetPolls++;
                        lastTarget = now;
                    }
                }
                final double elapsed = (System.nanoTime() - start) / 1e9;
                System.out.printf(
                        "%s %s target every %d us, postsPerPoll %s, round %d: %.3f M pages/s (%d failed,"
                                + " %d initiator polls, %d target polls, %d imms)%n",
                        provider,
                        options,
                        targetEveryNanos / 1000,
                        postsPerPoll,
                        round,
                        a.done / elapsed / 1e6,
                        a.failed,
                        polls,
                        targetPolls,
                        b.immCount);
                while (a.done < posted) {
                    left.poll();
                    right.poll();
                }
            }
        }
    }
}
