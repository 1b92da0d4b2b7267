package dev.transferengine.transport.tcp;

import dev.transferengine.TransferCounters;
import dev.transferengine.test.Checksums;
import dev.transferengine.test.PeerProcesses;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The outcome that counts in an attack on a target in a child JVM: the legitimate writer beside the attack lost
 * nothing, the target's engine is healthy, its heap stayed bounded and the bytes arrived intact.
 */
final class LegitimateWriter {

    private LegitimateWriter() {}

    /**
     * Waits (up to two minutes) for the writer's {@code writes} to end, then asserts each succeeded, the target is
     * healthy with at most {@code heapShare} of its heap in use after a collection ({@code situation}), and its region holds
     * {@code data}; prints the figures.
     */
    static void assertUnharmed(
            final PeerProcesses target,
            final TransferCounters counters,
            final int writes,
            final MemorySegment data,
            final double heapShare,
            final String situation)
            throws IOException, InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (counters.completed() + counters.failed() < writes && System.nanoTime() - deadline < 0) {
            Thread.sleep(5);
        }
        final String[] health = target.ask("HEALTH", "HEALTH");
        final String[] heap = target.ask("HEAP", "HEAP");
        final long used = Long.parseLong(heap[1]);
        final long max = Long.parseLong(heap[2]);
        System.out.printf(
                "%s: %d of %d legitimate writes failed, heap %d of %d bytes after GC; %s%n",
                situation, counters.failed(), writes, used, max, health[2]);
        assertThat(counters.completed()).isEqualTo(writes);
        assertThat(counters.failed()).as("failed legitimate writes").isZero();
        assertThat(health[1]).as("engine healthy: " + health[2]).isEqualTo("true");
        assertThat(used).as("heap in use after a collection, " + situation).isLessThan((long) (max * heapShare));
        assertThat(target.ask("CRC", "CRC")[1]).isEqualTo(Long.toString(Checksums.crc32c(data)));
    }
}
