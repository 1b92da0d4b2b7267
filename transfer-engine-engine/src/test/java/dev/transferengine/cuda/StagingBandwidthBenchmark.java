package dev.transferengine.cuda;

import dev.transferengine.spi.DeviceCopyStream;
import dev.transferengine.spi.StagingBuffer;

import java.lang.foreign.MemorySegment;
import java.util.Locale;

/**
 * Bandwidth of moving device memory through pinned host buffers, beside plain synchronous pinned cuMemcpy. The
 * staged path is the tcp transport's shape without the socket: device A -> pinned chunk (stream 1) -> host copy
 * into a second pinned chunk (the receiver's staging, standing in for the network hop) -> device B (stream 2), with
 * two chunks per side so copies overlap.
 *
 * <p>{@code java ... StagingBandwidthBenchmark [megabytes=256]}
 */
public final class StagingBandwidthBenchmark {

    private static final int REPETITIONS = 5;

    private StagingBandwidthBenchmark() {}

    public static void main(final String[] args) {
        final long bytes = (args.length > 0 ? Long.parseLong(args[0]) : 256) << 20;
        final CudaDevice device = CudaDevice.get(0);
        final CudaDeviceMemory memory = new CudaDeviceMemory();
        try (DeviceBuffer source = device.allocate(bytes);
                DeviceBuffer target = device.allocate(bytes);
                PinnedBuffer pinned = device.allocatePinned(bytes)) {
            source.fill((byte) 7);
            for (int r = 0; r < REPETITIONS; r++) {
                long start = System.nanoTime();
                source.copyToHost(pinned.segment());
                final long down = System.nanoTime() - start;
                start = System.nanoTime();
                target.copyFromHost(pinned.segment());
                final long up = System.nanoTime() - start;
                print("pinned cuMemcpyDtoH (sync)", bytes, down);
                print("pinned cuMemcpyHtoD (sync)", bytes, up);
            }
            for (final int chunkMiB : new int[] {1, 4, 16}) {
                for (int r = 0; r < REPETITIONS; r++) {
                    print(
                            "staged D->H->H->D, " + chunkMiB + " MiB chunks x2",
                            bytes,
                            staged(memory, source, target, bytes, (long) chunkMiB << 20));
                }
            }
        }
    }

    private static long staged(
            final CudaDeviceMemory memory,
            final DeviceBuffer source,
            final DeviceBuffer target,
            final long bytes,
            final long chunk) {
        final StagingBuffer[] sender = {memory.allocateStaging(0, chunk), memory.allocateStaging(0, chunk)};
        final StagingBuffer[] receiver = {memory.allocateStaging(0, chunk), memory.allocateStaging(0, chunk)};
        try (DeviceCopyStream down = memory.openCopyStream(0);
                DeviceCopyStream up = memory.openCopyStream(0)) {
            final long chunks = (bytes + chunk - 1) / chunk;
            final long[] downTicket = new long[2];
            final long[] upTicket = new long[2];
            final long start = System.nanoTime();
            enqueueDown(down, source, sender[0], 0, chunk, bytes, downTicket);
            for (long k = 0; k < chunks; k++) {
                final int side = (int) (k & 1);
                if (k + 1 < chunks) {
                    enqueueDown(down, source, sender[1 - side], k + 1, chunk, bytes, downTicket);
                }
                spin(down, downTicket[side]);
                spin(up, upTicket[side]);
                final long length = Math.min(chunk, bytes - k * chunk);
                MemorySegment.copy(sender[side].segment(), 0, receiver[side].segment(), 0, length);
                upTicket[side] = up.copyToDevice(receiver[side].segment(), target.devicePointer() + k * chunk, length);
            }
            spin(up, upTicket[0]);
            spin(up, upTicket[1]);
            return System.nanoTime() - start;
        } finally {
            for (int i = 0; i < 2; i++) {
                sender[i].close();
                receiver[i].close();
            }
        }
    }

    private static void enqueueDown(
            final DeviceCopyStream down,
            final DeviceBuffer source,
            final StagingBuffer into,
            final long k,
            final long chunk,
            final long bytes,
            final long[] tickets) {
        final long length = Math.min(chunk, bytes - k * chunk);
        tickets[(int) (k & 1)] = down.copyToHost(source.devicePointer() + k * chunk, into.segment(), length);
    }

    private static void spin(final DeviceCopyStream stream, final long ticket) {
        while (ticket > 0 && !stream.isDone(ticket)) {
            Thread.onSpinWait();
        }
    }

    private static void print(final String name, final long bytes, final long nanos) {
        System.out.println(String.format(
                Locale.ROOT,
                "%-40s %6.2f GB/s (%d MiB in %.2f ms)",
                name,
                bytes / (double) nanos,
                bytes >> 20,
                nanos / 1e6));
    }
}
