package dev.transferengine.cuda;

import dev.transferengine.Device;
import dev.transferengine.GroupSpec;
import dev.transferengine.MemoryRegion;
import dev.transferengine.Routing;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * GPU memory -> GPU memory between two engines in one JVM over the tcp transport (loopback), staged through pooled
 * pinned chunks: device -> host -> network -> host -> device. {@code java ... EngineStagingBenchmark [megabytes=256]
 * [nics=2] [chunkMegabytes=4] [chunks=4]}.
 */
public final class EngineStagingBenchmark {

    private EngineStagingBenchmark() {}

    public static void main(final String[] args) throws Exception {
        final long bytes = (args.length > 0 ? Long.parseLong(args[0]) : 256) << 20;
        final int nics = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        final String chunkBytes = Long.toString((args.length > 2 ? Long.parseLong(args[2]) : 4) << 20);
        final String chunks = args.length > 3 ? args[3] : "4";
        final CudaDevice device = CudaDevice.get(0);
        try (DeviceBuffer source = device.allocate(bytes);
                DeviceBuffer target = device.allocate(bytes);
                TransferEngine sender = engine(nics, chunkBytes, chunks);
                TransferEngine receiver = engine(nics, chunkBytes, chunks)) {
            source.fill((byte) 3);
            final MemoryRegion from = sender.register(source.segment(), Device.cuda(0));
            final MemoryRegion to = receiver.register(target.segment(), Device.cuda(0));
            for (int r = 0; r < 6; r++) {
                final long start = System.nanoTime();
                sender.submit(SingleWrite.of(from, 0, bytes, to.descriptor(), 0).withRouting(Routing.sharded(nics)))
                        .get(60, TimeUnit.SECONDS);
                final long nanos = System.nanoTime() - start;
                System.out.println(String.format(
                        Locale.ROOT,
                        "engine tcp %d NICs, device->device staged  %6.2f GB/s"
                                + " (%d MiB in %.1f ms; %s chunks of %s bytes)",
                        nics,
                        bytes / (double) nanos,
                        bytes >> 20,
                        nanos / 1e6,
                        chunks,
                        chunkBytes));
            }
        }
    }

    private static TransferEngine engine(final int nics, final String chunkBytes, final String chunks) {
        return TransferEngine.builder()
                .group(GroupSpec.of(nics).withCudaDevice(0))
                .option("tcp.stagingChunkBytes", chunkBytes)
                .option("tcp.stagingChunks", chunks)
                .build();
    }
}
