package dev.transferengine.cuda;

import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.DeviceCopyStream;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.StagingBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

/**
 * A {@link DeviceMemory} named {@value #NAME} whose "device" is host memory: a device address is a host address.
 * Copies really are deferred: each runs when {@link DeviceCopyStream#isDone} first reports it, and not at all
 * while {@link #HOLD} is set, so tests see the asynchronous path. Streams take {@value #CAPACITY} copies at once.
 * Select it with the engine option {@code device.memory=host-test}. Its {@link #allocationId} answers from
 * {@link #ALLOCATIONS}, which tests set to play the driver's answer for their own addresses, also in the middle of a
 * transfer ({@link #loseAfterCopies}). Its {@link #allocate} hands out host memory from shared arenas, each with a
 * fresh allocation id, and {@link #free} closes them.
 */
public final class HostBackedDeviceMemory implements DeviceMemory {

    public static final String NAME = "host-test";
    public static final int CAPACITY = 4;
    /** While true, no copy completes. */
    public static final AtomicBoolean HOLD = new AtomicBoolean();
    /** While true, asking whether a copy finished fails, as the driver does once it lost the device's context. */
    public static final AtomicBoolean FAIL_COPIES = new AtomicBoolean();

    public static final AtomicLong COPIES_TO_HOST = new AtomicLong();
    public static final AtomicLong COPIES_TO_DEVICE = new AtomicLong();
    /** Staging buffers allocated and not yet closed. */
    public static final AtomicLong LIVE_STAGING = new AtomicLong();

    /**
     * The {@link #allocationId} of each address a test named: an id, or {@link #NO_ALLOCATION} once the test
     * "freed" it; any other address answers {@link #UNKNOWN_ALLOCATION}, so other tests' regions are not watched.
     */
    public static final Map<Long, Long> ALLOCATIONS = new ConcurrentHashMap<>();

    /** Memory {@link #allocate} handed out and {@link #free} did not free yet, by address. */
    public static final Map<Long, Arena> ALLOCATED = new ConcurrentHashMap<>();

    private static final AtomicLong NEXT_ID = new AtomicLong(1_000);

    /** A loss {@link #loseAfterCopies} set up: at which address, after how many more copies, and the id after it. */
    private record Loss(long address, AtomicInteger copies, long id) {}

    private static final AtomicReference<@Nullable Loss> LOSS = new AtomicReference<>();

    /**
     * Plays an application that frees memory while a transfer touches it: once {@code copies} more copies (either
     * way) were enqueued, {@link #ALLOCATIONS} answers {@code id} for {@code address}: {@link #NO_ALLOCATION}, or
     * another allocation's id. Both the copy that engine checks next and its scope sweep then see the loss.
     */
    public static void loseAfterCopies(final long address, final int copies, final long id) {
        LOSS.set(new Loss(address, new AtomicInteger(copies), id));
    }

    /** Drops a {@link #loseAfterCopies} that no copy reached. */
    public static void forgetLoss() {
        LOSS.set(null);
    }

    /** Called as each copy is enqueued: applies a pending {@link #loseAfterCopies} once its count ran out. */
    private static void copyEnqueued() {
        final Loss loss = LOSS.get();
        if (loss != null && loss.copies().decrementAndGet() <= 0 && LOSS.compareAndSet(loss, null)) {
            ALLOCATIONS.put(loss.address(), loss.id());
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public @Nullable String unavailabilityCause() {
        return null;
    }

    @Override
    public int deviceCount() {
        return 1;
    }

    @Override
    public long allocationId(final int device, final long address) {
        return ALLOCATIONS.getOrDefault(address, UNKNOWN_ALLOCATION);
    }

    @Override
    @SuppressWarnings("MustBeClosedChecker") // closed by free
    public MemorySegment allocate(final int device, final long bytes) {
        final Arena arena = Arena.ofShared();
        final MemorySegment segment = arena.allocate(bytes, 4096);
        ALLOCATED.put(segment.address(), arena);
        ALLOCATIONS.put(segment.address(), NEXT_ID.incrementAndGet());
        return segment;
    }

    @Override
    public void free(final int device, final long address) {
        final Arena arena = ALLOCATED.remove(address);
        if (arena == null) {
            throw new IllegalStateException("0x" + Long.toHexString(address) + " was not allocated, or freed twice");
        }
        ALLOCATIONS.remove(address); // the address may be another test's next: unknown again, not watched
        arena.close();
    }

    @Override
    @SuppressWarnings("MustBeClosedChecker") // the staging buffer owns the arena and closes it when freed
    public StagingBuffer allocateStaging(final int device, final long bytes) {
        final Arena arena = Arena.ofShared();
        final MemorySegment segment = arena.allocate(bytes, 4096);
        LIVE_STAGING.incrementAndGet();
        return new StagingBuffer() {
            @Override
            public MemorySegment segment() {
                return segment;
            }

            @Override
            public void close() {
                if (arena.scope().isAlive()) {
                    arena.close();
                    LIVE_STAGING.decrementAndGet();
                }
            }
        };
    }

    @Override
    public DeviceCopyStream openCopyStream(final int device) {
        return new Stream();
    }

    private static final class Stream implements DeviceCopyStream {

        private record Copy(MemorySegment from, MemorySegment to, boolean toHost) {}

        private final ArrayDeque<Copy> pending = new ArrayDeque<>();
        private long issued;
        private long completed;

        @Override
        public int capacity() {
            return CAPACITY;
        }

        @Override
        public long copyToHost(final long deviceAddress, final MemorySegment host, final long length) {
            return enqueue(new Copy(at(deviceAddress, length), host.asSlice(0, length), true));
        }

        @Override
        public long copyToDevice(final MemorySegment host, final long deviceAddress, final long length) {
            return enqueue(new Copy(host.asSlice(0, length), at(deviceAddress, length), false));
        }

        @Override
        public boolean isDone(final long ticket) {
            if (FAIL_COPIES.get()) {
                throw new DeviceUnavailableException(
                        "copy " + (completed + 1) + " failed: CUDA_ERROR_LAUNCH_FAILED" + " (played by " + NAME + ")");
            }
            while (completed < ticket && !HOLD.get()) {
                final Copy copy = pending.pollFirst();
                MemorySegment.copy(copy.from(), 0, copy.to(), 0, copy.from().byteSize());
                (copy.toHost() ? COPIES_TO_HOST : COPIES_TO_DEVICE).incrementAndGet();
                completed++;
            }
            return completed >= ticket;
        }

        @Override
        public void close() {
            isDone(issued);
        }

        private long enqueue(final Copy copy) {
            if (pending.size() >= CAPACITY) {
                return BUSY;
            }
            pending.addLast(copy);
            copyEnqueued();
            return ++issued;
        }

        @SuppressWarnings("restricted")
        private static MemorySegment at(final long address, final long length) {
            return MemorySegment.ofAddress(address).reinterpret(length);
        }
    }
}
