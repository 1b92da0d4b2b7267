package dev.transferengine.cuda;

import dev.transferengine.exceptions.DeviceUnavailableException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Exports device memory as a dma-buf file descriptor ({@code cuMemGetHandleForAddressRange}), which JCuda lacks, so
 * it is called straight in {@code libcuda.so.1}. RDMA transports register the descriptor with the NIC
 * ({@code fi_mr_regattr} with a dmabuf, {@code ibv_reg_dmabuf_mr}).
 */
final class CudaDmaBuf {

    static final String LIBRARY = "libcuda.so.1";
    private static final int CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 1;

    private CudaDmaBuf() {}

    /**
     * Exports {@code [address, address + length)} of {@code device}'s memory; the range must be aligned to the host
     * page size. The caller owns (and closes) the returned descriptor. Blocks for the driver call.
     *
     * @throws DeviceUnavailableException if the driver refused, e.g. because the device or kernel lacks dma-buf
     */
    public static int export(final CudaDevice device, final long address, final long length) {
        device.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment fd = arena.allocate(ValueLayout.JAVA_INT);
            final int result =
                    (int) Handles.GET_HANDLE.invokeExact(fd, address, length, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0L);
            if (result != 0) {
                throw CudaCalls.failure(
                        result,
                        "cuMemGetHandleForAddressRange(0x" + Long.toHexString(address) + ", " + length
                                + ", DMA_BUF_FD)");
            }
            return fd.get(ValueLayout.JAVA_INT, 0);
        } catch (final DeviceUnavailableException e) {
            throw e;
        } catch (final Throwable t) {
            throw new AssertionError("cuMemGetHandleForAddressRange downcall failed", t);
        }
    }

    /** Linked on first use only, after {@link Cuda} found the driver. */
    private static final class Handles {

        static final MethodHandle GET_HANDLE = link();

        private static MethodHandle link() {
            return Cuda.driverFunction(
                    "cuMemGetHandleForAddressRange",
                    " (needs a CUDA 11.7+ driver)",
                    FunctionDescriptor.of(
                            ValueLayout.JAVA_INT,
                            ValueLayout.ADDRESS,
                            ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_LONG));
        }
    }
}
