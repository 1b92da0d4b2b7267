import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.TransferEngine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

/**
 * The target's region memory ({@code -Ddevice=host|cuda:N}): host memory from an arena, or GPU memory from
 * {@code cuMemAlloc} wrapped in a segment of the global scope, as a user's CUDA library hands it over. {@link #free()}
 * is what a careless application does: closes the arena, or calls {@code cuMemFree} and allocates the same size again
 * (the allocation that, before the driver check, received a peer's writes); {@link #nonZeroBytes()} then counts what
 * landed in that next allocation. With {@code -Dmemory=engine} the engine allocates the memory instead
 * ({@link Owned}, {@code TransferEngine.allocate}) and free is what the application does then: deregister, which
 * frees it once nothing touches it, and allocate the same size again through the engine.
 */
abstract sealed class TargetMemory {

    /**
     * {@code size} zeroed bytes on {@code device} ({@code host} or {@code cuda:N}), registered with {@code engine}:
     * allocated by the application ({@code memory} {@code raw}) or by the engine ({@code engine}).
     */
    static TargetMemory allocate(final String memory, final String device, final long size, final TransferEngine engine) {
        final Device where = parse(device);
        return switch (memory) {
            case "raw" -> where instanceof Device.Cuda cuda ? new Gpu(cuda, size, engine) : new Host(size, engine);
            case "engine" -> new Owned(where, size, engine);
            default -> throw new IllegalArgumentException("-Dmemory must be raw or engine, not '" + memory + "'");
        };
    }

    private static Device parse(final String device) {
        if (device.equals("host")) {
            return Device.host();
        }
        if (device.matches("cuda:\\d+")) {
            return new Device.Cuda(Integer.parseInt(device.substring(5)));
        }
        throw new IllegalArgumentException("-Ddevice must be host or cuda:N, not '" + device + "'");
    }

    /** The region peers attack. */
    abstract MemoryRegion region();

    abstract MemorySegment segment();

    abstract Device device();

    /** Frees the memory without deregistering it; returns what happened, as JSON fields. */
    abstract String free();

    /** Non-zero bytes in the memory now at the region's place (-1 for freed host memory, which cannot be read). */
    abstract long nonZeroBytes();

    /**
     * Bytes of the region that are neither 0 nor what a member writes there ({@link #written}): bytes nobody sent, such
     * as a tampered TLS record's; -1 where the memory cannot be read (freed, or on a GPU).
     */
    abstract long foreignBytes();

    /** Bytes of the 1 MiB guards before and after the region that are no longer 0xA5; -1 where not guarded. */
    abstract long guardBytesChanged();

    /** Guard bytes on each side of a host region. */
    static final long GUARD = 1 << 20;

    static final byte GUARD_BYTE = (byte) 0xA5;

    /** The region between two guards of 0xA5 in one allocation (out-of-bounds writes would land in a guard). */
    static final class Host extends TargetMemory {
        private final Arena arena = Arena.ofShared();
        private final MemorySegment guarded;
        private final MemorySegment memory;
        private final MemoryRegion region;

        Host(final long size, final TransferEngine engine) {
            guarded = arena.allocate(size + 2 * GUARD, 4096);
            guarded.fill(GUARD_BYTE);
            memory = guarded.asSlice(GUARD, size).fill((byte) 0);
            region = engine.register(memory, Device.host());
        }

        @Override
        MemoryRegion region() {
            return region;
        }

        @Override
        MemorySegment segment() {
            return memory;
        }

        @Override
        Device device() {
            return Device.host();
        }

        @Override
        String free() {
            arena.close();
            return "\"freed\":true";
        }

        @Override
        long nonZeroBytes() {
            return arena.scope().isAlive() ? count(memory) : -1;
        }

        @Override
        long foreignBytes() {
            if (!arena.scope().isAlive()) {
                return -1;
            }
            long foreign = 0;
            for (long i = 0; i < memory.byteSize(); i++) {
                final byte value = memory.get(ValueLayout.JAVA_BYTE, i);
                if (value != 0 && value != written(i)) {
                    foreign++;
                }
            }
            return foreign;
        }

        @Override
        long guardBytesChanged() {
            if (!arena.scope().isAlive()) {
                return -1;
            }
            long changed = 0;
            for (final long start : new long[] {0, GUARD + memory.byteSize()}) {
                for (long i = start; i < start + GUARD; i++) {
                    changed += guarded.get(ValueLayout.JAVA_BYTE, i) == GUARD_BYTE ? 0 : 1;
                }
            }
            return changed;
        }
    }

    static final class Gpu extends TargetMemory {
        private final Device.Cuda device;
        private final long size;
        private final MemoryRegion region;
        private Address pointer;

        Gpu(final Device.Cuda device, final long size, final TransferEngine engine) {
            this.device = device;
            this.size = size;
            makeCurrent(device);
            pointer = zeroed(size);
            region = engine.register(segment(), device);
        }

        /** Makes {@code device}'s primary context, which the engine uses too, current; held for the process's life. */
        static void makeCurrent(final Device.Cuda device) {
            JCudaDriver.setExceptionsEnabled(true);
            JCudaDriver.cuInit(0);
            final CUdevice gpu = new CUdevice();
            JCudaDriver.cuDeviceGet(gpu, device.ordinal());
            final CUcontext context = new CUcontext();
            JCudaDriver.cuDevicePrimaryCtxRetain(context, gpu);
            JCudaDriver.cuCtxSetCurrent(context);
        }

        /** Non-zero bytes of the {@code size} bytes of device memory at {@code address}. */
        static long nonZeroBytes(final long address, final long size) {
            try (Arena arena = Arena.ofConfined()) {
                final MemorySegment copy = arena.allocate(size);
                JCudaDriver.cuMemcpyDtoH(Pointer.to(copy.asByteBuffer()), at(address), size);
                return count(copy);
            }
        }

        /** A device pointer for a plain address: JCuda passes native pointer + offset, so an offset from null. */
        static CUdeviceptr at(final long address) {
            return new CUdeviceptr().withByteOffset(address);
        }

        @Override
        MemoryRegion region() {
            return region;
        }

        @Override
        @SuppressWarnings("restricted") // a device pointer: the engine never dereferences it on the host
        MemorySegment segment() {
            return MemorySegment.ofAddress(pointer.address()).reinterpret(size);
        }

        @Override
        Device device() {
            return device;
        }

        @Override
        String free() {
            final long freed = pointer.address();
            JCudaDriver.cuMemFree(pointer);
            pointer = zeroed(size);
            return "\"freed\":true,\"next_allocation_at_same_address\":" + (pointer.address() == freed);
        }

        @Override
        long nonZeroBytes() {
            return nonZeroBytes(pointer.address(), size);
        }

        @Override
        long foreignBytes() {
            return -1;
        }

        @Override
        long guardBytesChanged() {
            return -1;
        }

        private static Address zeroed(final long size) {
            final Address allocated = new Address();
            JCudaDriver.cuMemAlloc(allocated, size);
            JCudaDriver.cuMemsetD8(allocated, (byte) 0, size);
            return allocated;
        }

        /** A device pointer whose address can be read back. */
        private static final class Address extends CUdeviceptr {
            long address() {
                return getNativePointer() + getByteOffset();
            }
        }
    }

    /** Memory the engine allocated ({@code -Dmemory=engine}); free deregisters it and allocates again. */
    static final class Owned extends TargetMemory {
        private final Device device;
        private final long size;
        private final TransferEngine engine;
        private MemoryRegion region;

        Owned(final Device device, final long size, final TransferEngine engine) {
            this.device = device;
            this.size = size;
            this.engine = engine;
            if (device instanceof Device.Cuda cuda) {
                Gpu.makeCurrent(cuda); // for zeroing and counting on this thread
            }
            region = zeroed();
        }

        @Override
        MemoryRegion region() {
            return region;
        }

        @Override
        MemorySegment segment() {
            return region.segment();
        }

        @Override
        Device device() {
            return device;
        }

        @Override
        String free() {
            final long freed = region.segment().address();
            engine.deregister(region); // the engine frees it once nothing it queued touches it
            region = zeroed(); // registered under new keys that no peer knows
            return "\"freed\":true,\"memory\":\"engine\",\"next_allocation_at_same_address\":"
                    + (region.segment().address() == freed);
        }

        @Override
        long nonZeroBytes() {
            return device instanceof Device.Cuda
                    ? Gpu.nonZeroBytes(region.segment().address(), size)
                    : count(region.segment());
        }

        @Override
        long foreignBytes() {
            return -1;
        }

        @Override
        long guardBytesChanged() {
            return -1;
        }

        private MemoryRegion zeroed() {
            final MemoryRegion allocated = engine.allocate(device, size);
            if (device instanceof Device.Cuda) { // cuMemAlloc leaves the memory as it was; host arenas are zeroed
                JCudaDriver.cuMemsetD8(Gpu.at(allocated.segment().address()), (byte) 0, size);
            }
            return allocated;
        }
    }

    /**
     * What a member writes at byte {@code offset} of the region: Member.pattern's byte, as every write starts at a
     * multiple of 256 bytes in both regions.
     */
    static byte written(final long offset) {
        return (byte) (offset * 13 + 1);
    }

    static long count(final MemorySegment memory) {
        long nonZero = 0;
        for (long i = 0; i < memory.byteSize(); i++) {
            if (memory.get(ValueLayout.JAVA_BYTE, i) != 0) {
                nonZero++;
            }
        }
        return nonZero;
    }

}
