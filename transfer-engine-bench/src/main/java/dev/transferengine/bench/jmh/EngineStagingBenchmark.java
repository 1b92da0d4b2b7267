package dev.transferengine.bench.jmh;

import dev.transferengine.Device;
import dev.transferengine.GroupSpec;
import dev.transferengine.MemoryRegion;
import dev.transferengine.Routing;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.WriteRequest;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
 * GPU memory -> GPU memory between two engines in this JVM over the tcp transport (loopback), through the public
 * API: both engines' groups serve {@code Device.cuda(0)}, so the transport stages each write through its pooled
 * pinned chunks (device -> host -> network -> host -> device; options {@code tcp.stagingChunkBytes} and
 * {@code tcp.stagingChunks}). Each invocation is one write of {@code megabytes}, sharded over {@code nics}, awaited;
 * the score is writes/s, the {@code bytes} row bytes/s. Device memory is the bench's own ({@link CudaDriver}).
 * Needs a GPU: without one it fails at set-up, naming what is missing.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class EngineStagingBenchmark {

    /** MiB per write. */
    @Param({"256"})
    public long megabytes;

    /** NICs per engine; the write is sharded over all of them. */
    @Param({"2"})
    public int nics;

    /** MiB per staging chunk. */
    @Param({"4"})
    public long chunkMiB;

    /** Staging chunks per NIC. */
    @Param({"4"})
    public int chunks;

    private CudaDriver cuda;
    private long bytes;
    private long source;
    private long target;
    private TransferEngine sender;
    private TransferEngine receiver;
    private WriteRequest write;

    @Setup(Level.Trial)
    public void open() {
        Gpus.require("EngineStagingBenchmark");
        bytes = megabytes << 20;
        cuda = CudaDriver.open(0);
        source = cuda.allocDevice(bytes);
        target = cuda.allocDevice(bytes);
        cuda.fill(source, (byte) 3, bytes);
        sender = engine();
        receiver = engine();
        final MemoryRegion from = sender.register(CudaDriver.deviceSegment(source, bytes), Device.cuda(0));
        final MemoryRegion to = receiver.register(CudaDriver.deviceSegment(target, bytes), Device.cuda(0));
        write = SingleWrite.of(from, 0, bytes, to.descriptor(), 0).withRouting(Routing.sharded(nics));
    }

    private TransferEngine engine() {
        return TransferEngine.builder()
                .transport("tcp")
                .group(GroupSpec.of(nics).withCudaDevice(0))
                .option("tcp.stagingChunkBytes", Long.toString(chunkMiB << 20))
                .option("tcp.stagingChunks", Integer.toString(chunks))
                .build();
    }

    /** One device -> device write of {@code megabytes}, awaited. */
    @Benchmark
    public void deviceToDevice(final BytesMoved moved)
            throws InterruptedException, ExecutionException, TimeoutException {
        sender.submit(write).get(60, TimeUnit.SECONDS);
        moved.bytes += bytes;
    }

    @TearDown(Level.Trial)
    public void close() {
        sender.close();
        receiver.close();
        cuda.freeDevice(source);
        cuda.freeDevice(target);
        cuda.close();
    }
}
