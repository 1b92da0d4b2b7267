package dev.transferengine.spi;

import dev.transferengine.exceptions.DeviceUnavailableException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

import org.jspecify.annotations.Nullable;

/**
 * GPU memory services a transport needs to move device memory through host buffers: pinned staging buffers and
 * asynchronous copies whose completion is polled, so a worker never blocks. Registered in
 * {@code META-INF/services/dev.transferengine.spi.DeviceMemory}; the CUDA one is named {@code cuda}.
 *
 * <p>Methods may be called from any thread unless stated.
 */
public interface DeviceMemory {

    /** The provider a transport uses unless the engine option {@value #OPTION} names another. */
    String DEFAULT = "cuda";

    /** Engine option naming the provider, e.g. a host-backed one in tests. */
    String OPTION = "device.memory";

    /** {@link #allocationId}: the provider cannot tell which allocation holds the address (the default). */
    long UNKNOWN_ALLOCATION = 0;

    /** {@link #allocationId}: no live allocation holds the address; its memory was freed, or never allocated. */
    long NO_ALLOCATION = -1;

    /**
     * The provider's name, matched against the {@value #OPTION} option.
     *
     * @return the name, e.g. {@code cuda}
     */
    String name();

    /**
     * Whether devices can be used here. Must not throw: a driver that fails to load is a cause, not an error.
     *
     * @return null when devices can be used; otherwise why not (no driver, no device, library missing, ...)
     */
    @Nullable String unavailabilityCause();

    /**
     * How many devices this provider can serve.
     *
     * @return the number of usable devices, numbered from 0; 0 when unavailable
     */
    int deviceCount();

    /**
     * Allocates {@code bytes} of pinned host memory the device can copy from and to at full speed. Blocks for the
     * driver call (milliseconds); call it at setup, not per transfer.
     *
     * @param device the device ordinal, 0 to {@link #deviceCount()} - 1
     * @param bytes how much to allocate, in bytes
     * @return the buffer; close it to free the memory
     *
     * @throws DeviceUnavailableException if the device cannot be used or the allocation failed
     */
    StagingBuffer allocateStaging(int device, long bytes);

    /**
     * Opens an ordered stream of asynchronous copies on {@code device}. Blocks for the driver call.
     *
     * @param device the device ordinal, 0 to {@link #deviceCount()} - 1
     * @return the stream, to be used by one thread; close it to free it
     *
     * @throws DeviceUnavailableException if the device cannot be used
     */
    DeviceCopyStream openCopyStream(int device);

    /**
     * Which allocation of device memory holds {@code address} now, as an id the provider never gives another
     * allocation in this process: the engine records it when a region is registered and asks again every
     * millisecond, on the region's worker thread, and deregisters the region once the answer changes (the memory was
     * freed, or freed and the address handed to a new allocation). So it must be cheap (one driver call), must not
     * block and must not throw. Memory a caching allocator reuses without freeing it to the provider keeps its id.
     *
     * @param device the device ordinal the region was registered for
     * @param address an address inside the region
     * @return the allocation's id; {@link #NO_ALLOCATION} when none holds the address; {@link #UNKNOWN_ALLOCATION}
     *         when the provider cannot tell (the default, and then the engine learns of a free only through the
     *         region's segment scope)
     */
    default long allocationId(final int device, final long address) {
        return UNKNOWN_ALLOCATION;
    }

    /**
     * Allocates {@code bytes} of device memory for the engine ({@code TransferEngine.allocate}), which frees it with
     * {@link #free} once nothing it queued touches it any more. Blocks for the driver call (cuda: {@code
     * cuMemAlloc}).
     *
     * @param device the device ordinal, 0 to {@link #deviceCount()} - 1
     * @param bytes how much to allocate, more than 0
     * @return a segment of {@code bytes} whose address is the device pointer; not host-accessible
     *
     * @throws DeviceUnavailableException if the allocation failed, or this provider cannot allocate (the default)
     */
    default MemorySegment allocate(final int device, final long bytes) {
        throw new DeviceUnavailableException("device memory '" + name() + "' cannot allocate device memory for the"
                + " engine; allocate it yourself and register it");
    }

    /**
     * Frees memory {@link #allocate} returned. Blocks for the driver call (cuda: {@code cuMemFree}).
     *
     * @param device the device ordinal it was allocated on
     * @param address the address of the segment {@link #allocate} returned
     *
     * @throws DeviceUnavailableException if the driver refused, or this provider cannot allocate (the default)
     */
    default void free(final int device, final long address) {
        throw new DeviceUnavailableException("device memory '" + name() + "' allocates no device memory, so it cannot"
                + " free 0x" + Long.toHexString(address));
    }

    /**
     * The provider named {@code name} that can serve {@code device}. Loads the providers through
     * {@link ServiceLoader} on each call; call it at setup.
     *
     * @param name the provider's name, normally {@link #DEFAULT} or the {@value #OPTION} option
     * @param device the device ordinal the caller needs
     * @return the provider
     *
     * @throws DeviceUnavailableException naming the reason: no such provider on the class path, provider
     *                                    unavailable (with its cause), or no such device
     */
    static DeviceMemory require(final String name, final int device) {
        final List<String> found = new ArrayList<>();
        try {
            for (final DeviceMemory memory :
                    ServiceLoader.load(DeviceMemory.class, DeviceMemory.class.getClassLoader())) {
                if (!memory.name().equals(name)) {
                    found.add(memory.name());
                    continue;
                }
                final String cause = memory.unavailabilityCause();
                if (cause != null) {
                    throw new DeviceUnavailableException("device memory '" + name + "' is unavailable: " + cause);
                }
                if (device >= memory.deviceCount()) {
                    throw new DeviceUnavailableException(
                            "no " + name + " device " + device + ": this machine has " + memory.deviceCount());
                }
                return memory;
            }
        } catch (final ServiceConfigurationError e) {
            throw new DeviceUnavailableException("device memory providers could not be loaded: " + e.getMessage(), e);
        }
        throw new DeviceUnavailableException("no device memory provider '" + name + "' on the class path (found "
                + found + "); add org.jcuda:jcuda for CUDA");
    }
}
