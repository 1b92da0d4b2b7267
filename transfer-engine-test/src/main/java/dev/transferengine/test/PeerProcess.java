package dev.transferengine.test;

import dev.transferengine.Device;
import dev.transferengine.EngineCounter;
import dev.transferengine.GroupSpec;
import dev.transferengine.ImmCounter;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionAccess;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.TransportEvent;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * A receiving engine in its own JVM, driven over stdin/stdout by {@link PeerProcesses}, so tests cross a real
 * process boundary. Prints {@code READY <mainAddress> <mrdesc>}, then answers line commands:
 * {@code AWAIT <imm> <count>} (waits for the credits, then prints {@code COUNTED <imm> <balance-after>}),
 * {@code CRC} (prints {@code CRC <crc32c of the region>}), {@code DEREGISTER} (deregisters the region, then prints
 * {@code DEREGISTERED}), {@code REGISTER <READ_ONLY|WRITE_ONLY|READ_WRITE>} (registers a further host region of the
 * same size, every byte {@code 0x5A}, with that access; prints {@code REGISTERED <mrdesc>}), {@code RECEIVED <n>} (waits for {@code n} messages,
 * then prints {@code RECEIVED <count> <bytes>}), {@code HEALTH} (prints {@code HEALTH <healthy> <events>}, the
 * transport events that are not zero as {@code category/reason=count,...} or {@code -}), {@code HEAP} (collects
 * garbage, then prints {@code HEAP <used bytes> <max bytes>}).
 *
 * <p>Arguments: {@code transport nics regionBytes [key=value options...]}; the option {@code bindAddress=ADDR} sets
 * the engine's bind address, {@code tlsKeyStore=PATH} turns on mutual TLS with that identity (see
 * {@link TlsFixture#trustedFrom}), {@code device=cuda:N} puts the region (zeroed) on GPU N and the group near it,
 * {@code guard=BYTES} puts that many bytes of 0xA5 on both sides of the GPU region in the same allocation, every other
 * one goes to {@link TransferEngineBuilder#option}. GPU regions answer three more commands: {@code GUARDS} (prints
 * {@code GUARDS <true if every guard byte is 0xA5>}), {@code FREE} (frees the GPU memory without deregistering it,
 * as a careless application would, waits up to a minute for the engine to notice, then prints
 * {@code FREED <deregistered> <regions freed counter>}) and {@code REREGISTER} (deregisters the region, registers
 * the same memory again, prints {@code REGISTERED <mrdesc>}).
 */
public final class PeerProcess {

    private PeerProcess() {}

    /** {@code category/reason=count,...} of the counts that are not zero. */
    private static String events(final TransferEngine engine) {
        final StringBuilder text = new StringBuilder();
        for (final TransportEvent event : engine.transportEvents()) {
            if (event.count() > 0) {
                text.append(text.isEmpty() ? "" : ",")
                        .append(event.category())
                        .append('/')
                        .append(event.reason())
                        .append('=')
                        .append(event.count());
            }
        }
        return text.isEmpty() ? "-" : text.toString();
    }

    /**
     * Frees the GPU memory without deregistering it, as a careless application would, and waits up to a minute for
     * the engine to notice; {@code <deregistered> <regions freed counter>}.
     */
    private static String free(final @Nullable GpuMemory device, final MemoryRegion region, final TransferEngine engine)
            throws InterruptedException {
        if (device != null) {
            device.free();
        }
        final long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        // the worker marks the region deregistered before it closes the registration and counts it
        while ((region.isRegistered() || engine.metrics().counter(EngineCounter.REGIONS_FREED) == 0)
                && System.nanoTime() - deadline < 0) {
            Thread.sleep(1);
        }
        return !region.isRegistered() + " " + engine.metrics().counter(EngineCounter.REGIONS_FREED);
    }

    /**
     * Runs the peer: {@code transport nics regionBytes [key=value...]}, then answers commands on stdin.
     *
     * @param args the transport, NIC count, region size and options
     * @throws Exception if the engine cannot start; the parent sees the process end
     */
    public static void main(final String[] args) throws Exception {
        final TransferEngineBuilder builder =
                TransferEngine.builder().transport(args[0]).group(Integer.parseInt(args[1]));
        final long size = Long.parseLong(args[2]);
        int gpu = -1;
        long guard = 0;
        for (int i = 3; i < args.length; i++) {
            final String[] option = args[i].split("=", 2);
            switch (option[0]) {
                case "device" -> {
                    gpu = Integer.parseInt(option[1].substring("cuda:".length()));
                    builder.group(GroupSpec.of(Integer.parseInt(args[1])).withCudaDevice(gpu));
                }
                case "guard" -> guard = Long.parseLong(option[1]);
                case "bindAddress" -> builder.bindAddress(option[1]);
                case "tlsKeyStore" -> builder.tls(TlsFixture.trustedFrom(Path.of(option[1])));
                default -> builder.option(option[0], option[1]);
            }
        }
        try (Arena arena = Arena.ofShared();
                GpuMemory device = gpu < 0 ? null : GpuMemory.allocate(gpu, size, guard);
                TransferEngine engine = builder.build()) {
            final MemorySegment region = device == null ? arena.allocate(size, 4096) : device.segment();
            final Device where = device == null ? Device.host() : Device.cuda(gpu);
            MemoryRegion registered = engine.register(region, where);
            final RegionDescriptor desc = registered.descriptor();
            final AtomicLong messages = new AtomicLong();
            final AtomicLong bytes = new AtomicLong();
            engine.postedReceivePool(4096, 64, message -> {
                messages.incrementAndGet();
                bytes.addAndGet(message.byteSize());
            });
            System.out.println("READY " + engine.mainAddress() + " " + desc.toText());
            final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                final String[] command = line.split(" ", -1);
                switch (command[0]) {
                    case "AWAIT" -> {
                        final ImmCounter counter = engine.immCounter(Integer.parseInt(command[1]));
                        counter.await(Long.parseLong(command[2]), Duration.ofMinutes(2));
                        System.out.println("COUNTED " + command[1] + " " + counter.balance());
                    }
                    case "CRC" -> {
                        final MemorySegment copy = device == null ? region : arena.allocate(size);
                        if (device != null) {
                            device.copyToHost(copy);
                        }
                        System.out.println("CRC " + Checksums.crc32c(copy));
                    }
                    case "DEREGISTER" -> {
                        engine.deregister(registered);
                        System.out.println("DEREGISTERED");
                    }
                    case "REGISTER" -> {
                        final MemorySegment further = arena.allocate(size, 4096).fill((byte) 0x5A);
                        final RegionAccess access = RegionAccess.valueOf(command[1]);
                        System.out.println("REGISTERED "
                                + engine.register(further, Device.host(), access)
                                        .descriptor()
                                        .toText());
                    }
                    case "GUARDS" -> System.out.println("GUARDS " + (device != null && device.guardsIntact()));
                    case "FREE" -> System.out.println("FREED " + free(device, registered, engine));
                    case "REREGISTER" -> {
                        engine.deregister(registered);
                        registered = engine.register(region, where);
                        System.out.println(
                                "REGISTERED " + registered.descriptor().toText());
                    }
                    case "HEALTH" -> System.out.println("HEALTH " + engine.isHealthy() + " " + events(engine));
                    case "HEAP" -> {
                        System.gc();
                        final MemoryUsage heap =
                                ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
                        System.out.println("HEAP " + heap.getUsed() + " " + heap.getMax());
                    }
                    case "RECEIVED" -> {
                        // sends complete when the message landed; the listener counts it a moment later
                        final long expected = Long.parseLong(command[1]);
                        final long deadline =
                                System.nanoTime() + Duration.ofSeconds(60).toNanos();
                        while (messages.get() < expected && System.nanoTime() - deadline < 0) {
                            Thread.sleep(1);
                        }
                        System.out.println("RECEIVED " + messages.get() + " " + bytes.get());
                    }
                    case "EXIT" -> {
                        return;
                    }
                    default -> System.out.println("ERROR unknown command " + line);
                }
            }
        }
    }

    /**
     * GPU memory through JCuda in the device's primary context (which the engine uses too): a zeroed region between
     * two guards of 0xA5, one allocation. The region's segment belongs to a scope that {@link #close()} closes before
     * it frees the memory, so the engine sees the free (as an application that ties device memory to a scope does).
     */
    private static final class GpuMemory implements AutoCloseable {

        private static final byte GUARD_BYTE = (byte) 0xA5;

        private final jcuda.driver.CUdevice gpu = new jcuda.driver.CUdevice();
        private final jcuda.driver.CUcontext context = new jcuda.driver.CUcontext();
        private final Address pointer = new Address();
        private final Arena scope = Arena.ofShared();
        private final long size;
        private final long guard;
        private boolean closed;

        private GpuMemory(final int ordinal, final long size, final long guard) {
            this.size = size;
            this.guard = guard;
            check(jcuda.driver.JCudaDriver.cuInit(0), "cuInit");
            check(jcuda.driver.JCudaDriver.cuDeviceGet(gpu, ordinal), "cuDeviceGet");
            check(jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain(context, gpu), "cuDevicePrimaryCtxRetain");
            current();
            check(jcuda.driver.JCudaDriver.cuMemAlloc(pointer, size + 2 * guard), "cuMemAlloc");
            check(jcuda.driver.JCudaDriver.cuMemsetD8(pointer, GUARD_BYTE, size + 2 * guard), "cuMemsetD8");
            check(jcuda.driver.JCudaDriver.cuMemsetD8(pointer.withByteOffset(guard), (byte) 0, size), "cuMemsetD8");
        }

        static GpuMemory allocate(final int ordinal, final long size, final long guard) {
            return new GpuMemory(ordinal, size, guard);
        }

        @SuppressWarnings("restricted") // the device pointer and size, for registration; never dereferenced
        MemorySegment segment() {
            return MemorySegment.ofAddress(pointer.address() + guard).reinterpret(size, scope, null);
        }

        /** Copies the region (not the guards) into {@code host}. */
        void copyToHost(final MemorySegment host) {
            copy(host, guard);
        }

        boolean guardsIntact() {
            try (Arena temporary = Arena.ofConfined()) {
                final MemorySegment all = temporary.allocate(size + 2 * guard);
                copy(all, 0);
                final MemorySegment guards =
                        temporary.allocate(Math.max(1, guard)).fill(GUARD_BYTE);
                return MemorySegment.mismatch(all, 0, guard, guards, 0, guard) == -1
                        && MemorySegment.mismatch(all, guard + size, all.byteSize(), guards, 0, guard) == -1;
            }
        }

        private void copy(final MemorySegment host, final long from) {
            current();
            check(
                    jcuda.driver.JCudaDriver.cuMemcpyDtoH(
                            jcuda.Pointer.to(host.asByteBuffer()), pointer.withByteOffset(from), host.byteSize()),
                    "cuMemcpyDtoH");
        }

        private void current() {
            check(jcuda.driver.JCudaDriver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
        }

        private static void check(final int result, final String call) {
            if (result != jcuda.driver.CUresult.CUDA_SUCCESS) {
                throw new IllegalStateException(call + " failed: " + jcuda.driver.CUresult.stringFor(result));
            }
        }

        @Override
        public void close() {
            free();
        }

        /** Closes the region's scope (the engine then deregisters it), then frees the memory. Idempotent. */
        void free() {
            if (closed) {
                return;
            }
            closed = true;
            scope.close();
            current();
            jcuda.driver.JCudaDriver.cuMemFree(pointer);
            jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease(gpu);
        }

        /** A device pointer whose address can be read back. */
        private static final class Address extends jcuda.driver.CUdeviceptr {
            long address() {
                return getNativePointer() + getByteOffset();
            }
        }
    }
}
