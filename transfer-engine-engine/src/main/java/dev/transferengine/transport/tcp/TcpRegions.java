package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.RegionAccess;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.InvalidRequestException;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.ArrayList;

import org.agrona.collections.Long2ObjectHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The regions one domain registered, by remote key. Keys are random, non-zero 64-bit values from
 * {@link SecureRandom}, unique within the domain, so a peer cannot guess one. Worker thread only.
 */
final class TcpRegions {

    private final Long2ObjectHashMap<TcpMemory> byKey = new Long2ObjectHashMap<>();
    private final SecureRandom random = new SecureRandom();
    /** Deregistered host memory that served reads' READ_DATA still read from, until they end. */
    private final ArrayList<TcpMemory> stillServing = new ArrayList<>();

    private final TcpStaging staging;

    TcpRegions(final TcpStaging staging) {
        this.staging = staging;
    }

    /**
     * @return the new region's key
     * @throws DeviceUnavailableException for device memory that the device memory provider cannot serve
     * @throws InvalidRequestException    for a read-only segment peers may write into, which their bytes could not
     *     land in
     */
    long register(final MemorySegment segment, final Device device, final RegionAccess access) {
        if (segment.isReadOnly() && access.allowsRemoteWrite()) {
            throw new InvalidRequestException("tcp transport: cannot register a read-only segment of "
                    + segment.byteSize() + " bytes as " + access + ": remote writes could not land in it");
        }
        long key;
        do {
            key = random.nextLong();
        } while (key == 0 || byKey.containsKey(key));
        final TcpMemory memory =
                device instanceof Device.Cuda cuda ? staging.register(segment, cuda) : new TcpMemory(segment);
        byKey.put(key, memory.access(access));
        return key;
    }

    /** Forgets a region; a read still placing bytes into it stops doing so. Unknown keys are ignored. */
    void deregister(final long rkey) {
        final TcpMemory memory = byKey.remove(rkey);
        if (memory != null) {
            memory.retire();
            if (memory.device() >= 0) {
                staging.deregistered();
            }
            if (memory.serving()) {
                stillServing.add(memory);
            }
        }
    }

    /** Whether a deregistered region's memory is still read: staged copies, or READ_DATA queued from it. */
    boolean touches(final MemorySegment segment) {
        boolean touched = staging.touches(segment);
        for (int i = stillServing.size() - 1; i >= 0; i--) {
            final TcpMemory memory = stillServing.get(i);
            if (!memory.serving()) {
                stillServing.remove(i);
            } else if (memory.segment().equals(segment)) {
                touched = true;
            }
        }
        return touched;
    }

    @Nullable TcpMemory lookup(final long rkey) {
        return byKey.get(rkey);
    }

    int count() {
        return byKey.size();
    }
}
