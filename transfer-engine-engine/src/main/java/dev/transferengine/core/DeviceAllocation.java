package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.spi.DeviceMemory;

import java.lang.foreign.MemorySegment;

import org.jspecify.annotations.Nullable;

/**
 * The allocation a device region's memory belonged to when it was registered, as its device memory provider names
 * it ({@link DeviceMemory#allocationId}). A segment of the global scope, how device pointers are usually wrapped,
 * says nothing when the application frees the memory; the provider's id does: the scope sweep asks again and
 * deregisters the region once the address has no allocation or another one (docs/security.md).
 */
final class DeviceAllocation {

    private final DeviceMemory memory;
    private final int device;
    private final long address;
    private final long id;

    private DeviceAllocation(final DeviceMemory memory, final int device, final long address, final long id) {
        this.memory = memory;
        this.device = device;
        this.address = address;
        this.id = id;
    }

    /**
     * The allocation holding {@code segment} now, or null when there is nothing to watch: host memory, no usable
     * provider named {@code provider} (the transport says whether it can serve the device; fabric registers device
     * memory without one), or a provider that cannot tell. Loads the providers; call it at registration.
     *
     * @throws InvalidRequestException if the provider knows no allocation at the segment's address
     */
    static @Nullable DeviceAllocation of(final String provider, final MemorySegment segment, final Device device) {
        if (!(device instanceof Device.Cuda cuda)) {
            return null;
        }
        final DeviceMemory memory;
        try {
            memory = DeviceMemory.require(provider, cuda.ordinal());
        } catch (final DeviceUnavailableException e) {
            return null;
        }
        final long id = memory.allocationId(cuda.ordinal(), segment.address());
        if (id == DeviceMemory.NO_ALLOCATION) {
            throw new InvalidRequestException("0x" + Long.toHexString(segment.address()) + " is not in memory allocated"
                    + " on " + device + " (device memory '" + provider + "' knows no allocation there: freed, or"
                    + " never allocated); register device memory while it is allocated");
        }
        return id == DeviceMemory.UNKNOWN_ALLOCATION
                ? null
                : new DeviceAllocation(memory, cuda.ordinal(), segment.address(), id);
    }

    /**
     * Null while the address still belongs to the allocation (or the provider cannot tell now); otherwise how it was
     * lost, for the log. One provider call; worker thread.
     */
    @Nullable String loss() {
        final long now = memory.allocationId(device, address);
        if (now == id || now == DeviceMemory.UNKNOWN_ALLOCATION) {
            return null;
        }
        return now == DeviceMemory.NO_ALLOCATION
                ? "its device memory was freed while registered (no allocation holds 0x" + Long.toHexString(address)
                        + " any more)"
                : "its device memory was freed while registered and the address given to a new allocation (id " + now
                        + ", was " + id + ")";
    }
}
