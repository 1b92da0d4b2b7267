package dev.transferengine.test;

import dev.transferengine.Device;
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
 * every other one goes to {@link TransferEngineBuilder#option}.
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
        for (int i = 3; i < args.length; i++) {
            final String[] option = args[i].split("=", 2);
            switch (option[0]) {
                case "device" -> {
                    gpu = Integer.parseInt(option[1].substring("cuda:".length()));
                    builder.group(GroupSpec.of(Integer.parseInt(args[1])).withCudaDevice(gpu));
                }
                case "bindAddress" -> builder.bindAddress(option[1]);
                case "tlsKeyStore" -> builder.tls(TlsFixture.trustedFrom(Path.of(option[1])));
                default -> builder.option(option[0], option[1]);
            }
        }
        try (Arena arena = Arena.ofShared();
                GpuMemory device = gpu < 0 ? null : GpuMemory.allocate(gpu, size);
                TransferEngine engine = builder.build()) {
            final MemorySegment region = device == null ? arena.allocate(size, 4096) : device.segment();
            final MemoryRegion registered = engine.register(region, device == null ? Device.host() : Device.cuda(gpu));
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

    /** GPU memory through JCuda in the device's primary context (which the engine uses too); zeroed. */
    private static final class GpuMemory implements AutoCloseable {

        private final jcuda.driver.CUdevice gpu = new jcuda.driver.CUdevice();
        private final jcuda.driver.CUcontext context = new jcuda.driver.CUcontext();
        private final Address pointer = new Address();
        private final long size;

        private GpuMemory(final int ordinal, final long size) {
            this.size = size;
            check(jcuda.driver.JCudaDriver.cuInit(0), "cuInit");
            check(jcuda.driver.JCudaDriver.cuDeviceGet(gpu, ordinal), "cuDeviceGet");
            check(jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain(context, gpu), "cuDevicePrimaryCtxRetain");
            current();
            check(jcuda.driver.JCudaDriver.cuMemAlloc(pointer, size), "cuMemAlloc");
            check(jcuda.driver.JCudaDriver.cuMemsetD8(pointer, (byte) 0, size), "cuMemsetD8");
        }

        static GpuMemory allocate(final int ordinal, final long size) {
            return new GpuMemory(ordinal, size);
        }

        @SuppressWarnings("restricted") // the device pointer and size, for registration; never dereferenced
        MemorySegment segment() {
            return MemorySegment.ofAddress(pointer.address()).reinterpret(size);
        }

        void copyToHost(final MemorySegment host) {
            current();
            check(
                    jcuda.driver.JCudaDriver.cuMemcpyDtoH(
                            jcuda.Pointer.to(host.asByteBuffer()), pointer, host.byteSize()),
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
