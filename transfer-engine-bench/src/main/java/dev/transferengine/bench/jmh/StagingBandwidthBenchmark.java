package dev.transferengine.bench.jmh;

import dev.transferengine.spi.DeviceCopyStream;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.StagingBuffer;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Moving device memory through pinned host buffers with the engine's exported device-memory SPI
 * ({@link DeviceMemory}: {@link StagingBuffer}s and polled {@link DeviceCopyStream}s, what the tcp transport stages
 * GPU writes with), on a real GPU. Device memory is the bench's own ({@link CudaDriver}). The score is copies/s, the
 * {@code bytes} row bytes/s.
 *
 * <ul>
 *   <li>{@code pinnedDown} / {@code pinnedUp}: one copy of {@code megabytes} between device memory and one pinned
 *       buffer, polled to completion (the old {@code main()} timed a synchronous {@code cuMemcpy}; this is the same
 *       copy through the SPI's stream).
 *   <li>{@code staged}: the tcp transport's shape without the socket: device A -> pinned chunk (stream 1) -> host
 *       copy into a second pinned chunk (the receiver's staging, standing in for the network hop) -> device B (stream
 *       2), two chunks of {@code chunkMiB} per side so that copies overlap.
 *   <li>{@code stagedWithoutHop}: {@code staged} less the host copy: device A -> pinned chunk -> device B from the
 *       same chunk; what the two PCIe directions give when they overlap.
 *   <li>{@code hostHop}: the host copy alone, {@code megabytes} from the sender's pinned chunks into the receiver's,
 *       chunk by chunk on one thread: the hop that bounds {@code staged} (docs/benchmarks.md has the profile).
 * </ul>
 *
 * Needs a GPU: without one every benchmark fails at set-up, naming what is missing.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class StagingBandwidthBenchmark {

    /** Source and target device memory. */
    @State(Scope.Benchmark)
    public static class Buffers {

        /** MiB per copy. */
        @Param({"256"})
        public long megabytes;

        DeviceMemory memory;
        CudaDriver cuda;
        long bytes;
        long source;
        long target;

        @Setup(Level.Trial)
        public void open() {
            memory = Gpus.require("StagingBandwidthBenchmark");
            bytes = megabytes << 20;
            cuda = CudaDriver.open(0);
            source = cuda.allocDevice(bytes);
            target = cuda.allocDevice(bytes);
            cuda.fill(source, (byte) 7, bytes);
        }

        @TearDown(Level.Trial)
        public void close() {
            cuda.freeDevice(source);
            cuda.freeDevice(target);
            cuda.close();
        }
    }

    /** One pinned buffer of the whole size and one stream. */
    @State(Scope.Benchmark)
    public static class Pinned {

        StagingBuffer host;
        DeviceCopyStream stream;

        @Setup(Level.Trial)
        public void open(final Buffers buffers) {
            host = buffers.memory.allocateStaging(0, buffers.bytes);
            stream = buffers.memory.openCopyStream(0);
        }

        @TearDown(Level.Trial)
        public void close() {
            stream.close();
            host.close();
        }
    }

    /** Two pinned chunks per side and a stream per direction. */
    @State(Scope.Benchmark)
    public static class Staged {

        /** MiB per chunk. */
        @Param({"1", "4", "16"})
        public long chunkMiB;

        long chunk;
        StagingBuffer[] sender;
        StagingBuffer[] receiver;
        DeviceCopyStream down;
        DeviceCopyStream up;
        final long[] downTicket = new long[2];
        final long[] upTicket = new long[2];

        @Setup(Level.Trial)
        public void open(final Buffers buffers) {
            chunk = chunkMiB << 20;
            final DeviceMemory memory = buffers.memory;
            sender = new StagingBuffer[] {memory.allocateStaging(0, chunk), memory.allocateStaging(0, chunk)};
            receiver = new StagingBuffer[] {memory.allocateStaging(0, chunk), memory.allocateStaging(0, chunk)};
            down = memory.openCopyStream(0);
            up = memory.openCopyStream(0);
        }

        @TearDown(Level.Trial)
        public void close() {
            down.close();
            up.close();
            for (int i = 0; i < 2; i++) {
                sender[i].close();
                receiver[i].close();
            }
        }
    }

    /** Device -> one pinned buffer. */
    @Benchmark
    public void pinnedDown(final Buffers buffers, final Pinned pinned, final BytesMoved moved) {
        spin(pinned.stream, ticket(pinned.stream.copyToHost(buffers.source, pinned.host.segment(), buffers.bytes)));
        moved.bytes += buffers.bytes;
    }

    /** One pinned buffer -> device. */
    @Benchmark
    public void pinnedUp(final Buffers buffers, final Pinned pinned, final BytesMoved moved) {
        spin(pinned.stream, ticket(pinned.stream.copyToDevice(pinned.host.segment(), buffers.target, buffers.bytes)));
        moved.bytes += buffers.bytes;
    }

    /** Device A -> pinned chunk -> pinned chunk -> device B, double-buffered. */
    @Benchmark
    public void staged(final Buffers buffers, final Staged s, final BytesMoved moved) {
        final long bytes = buffers.bytes;
        final long chunks = (bytes + s.chunk - 1) / s.chunk;
        s.downTicket[0] = 0;
        s.downTicket[1] = 0;
        s.upTicket[0] = 0;
        s.upTicket[1] = 0;
        down(buffers, s, 0);
        for (long k = 0; k < chunks; k++) {
            final int side = (int) (k & 1);
            if (k + 1 < chunks) {
                down(buffers, s, k + 1);
            }
            spin(s.down, s.downTicket[side]);
            spin(s.up, s.upTicket[side]);
            final long length = Math.min(s.chunk, bytes - k * s.chunk);
            MemorySegment.copy(s.sender[side].segment(), 0, s.receiver[side].segment(), 0, length);
            s.upTicket[side] =
                    ticket(s.up.copyToDevice(s.receiver[side].segment(), buffers.target + k * s.chunk, length));
        }
        spin(s.up, s.upTicket[0]);
        spin(s.up, s.upTicket[1]);
        moved.bytes += bytes;
    }

    /** Device A -> pinned chunk -> device B from that chunk, double-buffered: {@link #staged} without the host hop. */
    @Benchmark
    public void stagedWithoutHop(final Buffers buffers, final Staged s, final BytesMoved moved) {
        final long bytes = buffers.bytes;
        final long chunks = (bytes + s.chunk - 1) / s.chunk;
        s.downTicket[0] = 0;
        s.downTicket[1] = 0;
        s.upTicket[0] = 0;
        s.upTicket[1] = 0;
        for (long k = 0; k < chunks; k++) {
            final int side = (int) (k & 1);
            spin(s.up, s.upTicket[side]); // the chunk is free once its last upload ended
            down(buffers, s, k);
            spin(s.down, s.downTicket[side]);
            final long length = Math.min(s.chunk, bytes - k * s.chunk);
            s.upTicket[side] =
                    ticket(s.up.copyToDevice(s.sender[side].segment(), buffers.target + k * s.chunk, length));
        }
        spin(s.up, s.upTicket[0]);
        spin(s.up, s.upTicket[1]);
        moved.bytes += bytes;
    }

    /** The host hop of {@link #staged} alone: pinned chunk -> pinned chunk on this thread, {@code megabytes} in all. */
    @Benchmark
    public void hostHop(final Buffers buffers, final Staged s, final BytesMoved moved) {
        final long bytes = buffers.bytes;
        for (long done = 0, k = 0; done < bytes; k++) {
            final int side = (int) (k & 1);
            final long length = Math.min(s.chunk, bytes - done);
            MemorySegment.copy(s.sender[side].segment(), 0, s.receiver[side].segment(), 0, length);
            done += length;
        }
        moved.bytes += bytes;
    }

    private static void down(final Buffers buffers, final Staged s, final long k) {
        final long length = Math.min(s.chunk, buffers.bytes - k * s.chunk);
        final int side = (int) (k & 1);
        s.downTicket[side] = ticket(s.down.copyToHost(buffers.source + k * s.chunk, s.sender[side].segment(), length));
    }

    /** The benchmarks keep at most two copies pending per stream, far below its capacity. */
    private static long ticket(final long ticket) {
        if (ticket == DeviceCopyStream.BUSY) {
            throw new IllegalStateException("copy stream busy with at most two copies pending");
        }
        return ticket;
    }

    private static void spin(final DeviceCopyStream stream, final long ticket) {
        while (ticket > 0 && !stream.isDone(ticket)) {
            Thread.onSpinWait();
        }
    }
}
