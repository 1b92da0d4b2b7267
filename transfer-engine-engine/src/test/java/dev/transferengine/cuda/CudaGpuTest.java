package dev.transferengine.cuda;

import dev.transferengine.IdleStrategyKind;
import dev.transferengine.UvmChange;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.DeviceCopyStream;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.StagingBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static jcuda.driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
import static jcuda.driver.JCudaDriver.cuGraphDestroy;
import static jcuda.driver.JCudaDriver.cuGraphExecDestroy;
import static jcuda.driver.JCudaDriver.cuGraphInstantiate;
import static jcuda.driver.JCudaDriver.cuGraphLaunch;
import static jcuda.driver.JCudaDriver.cuStreamBeginCapture;
import static jcuda.driver.JCudaDriver.cuStreamEndCapture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** On a real GPU: kernels bump watchers (also from a CUDA graph), and device memory copies through the SPI. */
class CudaGpuTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    private static CudaDevice device;
    private static WatcherKernels kernels;
    private static UvmWatchers watchers;

    @BeforeAll
    static void openDevice() {
        assumeTrue(Cuda.isAvailable(), "needs an NVIDIA GPU with libcuda.so.1: " + Cuda.unavailabilityCause());
        device = CudaDevice.get(0);
        kernels = WatcherKernels.load(device);
        watchers = UvmWatchers.open(
                0,
                UvmWatchersConfig.defaults()
                        .withPollIdle(IdleStrategyKind.SPIN)
                        .withCallbackIdle(IdleStrategyKind.SPIN));
    }

    @AfterAll
    static void closeDevice() {
        if (watchers != null) {
            watchers.close();
            kernels.close();
        }
    }

    @Test
    void callTheListenerOncePerKernelStoreWithOldAndNewValue() {
        final List<UvmChange> changes = new CopyOnWriteArrayList<>();
        final UvmWatcher watcher = watchers.allocate((o, n) -> changes.add(new UvmChange(o, n)));
        for (int k = 1; k <= 200; k++) {
            kernels.store(watcher.devicePointer(), k * 3L);
            kernels.synchronize();
            final int expected = k;
            await().atMost(PATIENCE).until(() -> changes.size() >= expected);
        }
        watcher.close();

        assertThat(changes).hasSize(200);
        for (int k = 1; k <= 200; k++) {
            assertThat(changes.get(k - 1)).isEqualTo(new UvmChange((k - 1) * 3L, k * 3L));
        }
    }

    @Test
    void deliverAnUnbrokenChainEndingAtTheLastValueWhenAKernelStoresFasterThanThePolling() {
        final List<UvmChange> changes = new CopyOnWriteArrayList<>();
        final UvmWatcher watcher = watchers.allocate((o, n) -> changes.add(new UvmChange(o, n)));
        kernels.increment(watcher.devicePointer(), 1_000_000);
        kernels.synchronize();
        await().atMost(PATIENCE)
                .until(() -> !changes.isEmpty() && changes.getLast().newValue() == 1_000_000);
        watcher.close();

        long previous = 0;
        for (final UvmChange change : changes) {
            assertThat(change.oldValue()).isEqualTo(previous);
            assertThat(change.newValue()).isGreaterThan(change.oldValue());
            previous = change.newValue();
        }
        assertThat(changes.size()).isBetween(2, 1_000_000);
    }

    @Test
    void seeEveryReplayOfAKernelCapturedInACudaGraph() {
        final List<UvmChange> changes = new CopyOnWriteArrayList<>();
        final UvmWatcher watcher = watchers.allocate((o, n) -> changes.add(new UvmChange(o, n)));
        device.makeCurrent();
        CudaCalls.check(
                cuStreamBeginCapture(kernels.stream(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
        kernels.increment(watcher.devicePointer(), 1);
        final CUgraph graph = new CUgraph();
        CudaCalls.check(cuStreamEndCapture(kernels.stream(), graph), "cuStreamEndCapture");
        final CUgraphExec exec = new CUgraphExec();
        CudaCalls.check(cuGraphInstantiate(exec, graph, 0), "cuGraphInstantiate");
        try {
            for (int k = 1; k <= 50; k++) {
                CudaCalls.check(cuGraphLaunch(exec, kernels.stream()), "cuGraphLaunch");
                kernels.synchronize();
                final int expected = k;
                await().atMost(PATIENCE).until(() -> changes.size() >= expected);
            }
        } finally {
            cuGraphExecDestroy(exec);
            cuGraphDestroy(graph);
            watcher.close();
        }

        assertThat(changes).hasSize(50);
        assertThat(changes.getFirst()).isEqualTo(new UvmChange(0, 1));
        assertThat(changes.getLast()).isEqualTo(new UvmChange(49, 50));
    }

    @Test
    void roundTripBytesThroughDeviceMemoryWithSynchronousCopies() {
        try (DeviceBuffer buffer = device.allocate(1 << 20);
                Arena arena = Arena.ofConfined()) {
            final MemorySegment out = pattern(arena, 1 << 20);
            final MemorySegment in = arena.allocate(1 << 20);
            buffer.copyFromHost(out);
            buffer.copyToHost(in);

            assertThat(in.mismatch(out)).isEqualTo(-1);
        }
    }

    @Test
    void stageDeviceMemoryThroughPinnedBuffersWithAsynchronousCopies() {
        final DeviceMemory memory = DeviceMemory.require(DeviceMemory.DEFAULT, 0);
        final int size = 8 << 20;
        try (DeviceBuffer source = device.allocate(size);
                DeviceBuffer target = device.allocate(size);
                StagingBuffer staging = memory.allocateStaging(0, size);
                DeviceCopyStream stream = memory.openCopyStream(0);
                Arena arena = Arena.ofConfined()) {
            final MemorySegment expected = pattern(arena, size);
            source.copyFromHost(expected);

            final long down = stream.copyToHost(source.devicePointer(), staging.segment(), size);
            final long up = stream.copyToDevice(staging.segment(), target.devicePointer(), size);
            await().atMost(PATIENCE).until(() -> stream.isDone(up));
            final MemorySegment actual = arena.allocate(size);
            target.copyToHost(actual);

            assertThat(up).isGreaterThan(down);
            assertThat(stream.isDone(down)).isTrue();
            assertThat(actual.mismatch(expected)).isEqualTo(-1);
        }
    }

    /**
     * A copy's ticket may be looked at after its stream was closed (tcp holds an answer on it while the staging frees
     * its streams): the close waited for the copy, so it is done, where a closed error repeated every duty cycle
     * before and the answer never left.
     */
    @Test
    void reportCopiesDoneAfterTheirStreamClosed() {
        final DeviceMemory memory = DeviceMemory.require(DeviceMemory.DEFAULT, 0);
        final int size = 8 << 20;
        try (DeviceBuffer target = device.allocate(size);
                StagingBuffer staging = memory.allocateStaging(0, size)) {
            final DeviceCopyStream stream = memory.openCopyStream(0);
            final long ticket = stream.copyToDevice(staging.segment(), target.devicePointer(), size);
            stream.close();

            assertThat(stream.isDone(ticket)).isTrue();
        }
    }

    @Test
    void exportDeviceMemoryAsADmaBufDescriptor() throws Exception {
        try (DeviceBuffer buffer = device.allocate(2 << 20)) {
            final int fd;
            try {
                fd = CudaDmaBuf.export(device, buffer.devicePointer(), buffer.byteSize());
            } catch (final DeviceUnavailableException e) {
                final String message = String.valueOf(e.getMessage());
                assumeTrue(!message.contains("NOT_SUPPORTED"), "dma-buf not supported here: " + message);
                throw e;
            }
            assertThat(fd).isNotNegative();
            assertThat(Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString())
                    .contains("dmabuf");
        }
    }

    private static MemorySegment pattern(final Arena arena, final int size) {
        final MemorySegment segment = arena.allocate(size);
        for (int i = 0; i < size; i += Long.BYTES) {
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
        }
        return segment;
    }
}
