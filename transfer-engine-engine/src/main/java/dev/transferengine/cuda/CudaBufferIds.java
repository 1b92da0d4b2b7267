package dev.transferengine.cuda;

import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.DeviceMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

import jcuda.driver.CUresult;

/**
 * The driver's id of the allocation that holds an address ({@code cuPointerGetAttribute} with
 * {@code CU_POINTER_ATTRIBUTE_BUFFER_ID}, unique per allocation in the process): the scope sweep asks it every
 * millisecond per registered device region, so it is called straight in {@code libcuda.so.1} with a per-thread
 * result slot, without JCuda's per-call pointer objects.
 */
final class CudaBufferIds {

    private static final int CU_POINTER_ATTRIBUTE_BUFFER_ID = 7; // jcuda.driver.CUpointer_attribute

    /** Where the driver writes the id; one per thread, as each group's worker asks for its own regions. */
    private static final ThreadLocal<MemorySegment> RESULT =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(ValueLayout.JAVA_LONG));

    private CudaBufferIds() {}

    /**
     * The id of the allocation holding {@code address}, made current with {@code device}'s context first.
     *
     * @return the id; {@link DeviceMemory#NO_ALLOCATION} if the driver knows no allocation there (freed, or never
     *         allocated); {@link DeviceMemory#UNKNOWN_ALLOCATION} if the query failed otherwise, or the driver's id
     *         collides with either answer
     */
    static long of(final CudaDevice device, final long address) {
        try {
            device.makeCurrent();
        } catch (final DeviceUnavailableException e) {
            return DeviceMemory.UNKNOWN_ALLOCATION;
        }
        final MemorySegment result = RESULT.get();
        final int status;
        try {
            status = (int) Handles.GET_ATTRIBUTE.invokeExact(result, CU_POINTER_ATTRIBUTE_BUFFER_ID, address);
        } catch (final Throwable t) {
            throw new AssertionError("cuPointerGetAttribute downcall failed", t);
        }
        if (status == CUresult.CUDA_ERROR_INVALID_VALUE) { // the driver's answer for an address no allocation holds
            return DeviceMemory.NO_ALLOCATION;
        }
        final long id = result.get(ValueLayout.JAVA_LONG, 0);
        return status != CUresult.CUDA_SUCCESS || id == DeviceMemory.NO_ALLOCATION
                ? DeviceMemory.UNKNOWN_ALLOCATION
                : id;
    }

    /** Linked on first use only, after {@link Cuda} found the driver. */
    private static final class Handles {

        static final MethodHandle GET_ATTRIBUTE = link();

        private static MethodHandle link() {
            return Cuda.driverFunction(
                    "cuPointerGetAttribute",
                    "",
                    FunctionDescriptor.of(
                            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        }
    }
}
