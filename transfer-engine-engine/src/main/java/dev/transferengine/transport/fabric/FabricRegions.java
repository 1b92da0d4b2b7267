package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.RegionAccess;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.nativeaccess.NativeCallException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.Arrays;

import org.agrona.collections.Long2LongHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.transferengine.transport.fabric.FabricLayout.*;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The memory regions registered on one endpoint, following the MR mode the provider returned:
 * <ul>
 *   <li>keys: with FI_MR_PROV_KEY the provider picks them (read from {@code fid_mr.key}); otherwise this class asks
 *       for a random key that is unique within the domain, so a stale or guessed key is unlikely to hit a live
 *       region;</li>
 *   <li>remote addressing: with FI_MR_VIRT_ADDR a remote address is the region's virtual address plus the offset,
 *       otherwise just the offset into the region;</li>
 *   <li>local descriptors: with FI_MR_LOCAL every local buffer must be registered and its {@code fi_mr_desc}
 *       passed; buffers outside any region get a temporary local registration.</li>
 * </ul>
 * Single-threaded (the domain's worker); registration allocates, lookups by key do not.
 */
final class FabricRegions {

    private static final long FI_READ = 1L << 8;
    private static final long FI_WRITE = 1L << 9;
    private static final long FI_RECV = 1L << 10;
    private static final long FI_SEND = 1L << 11;
    private static final long FI_REMOTE_READ = 1L << 12;
    private static final long FI_REMOTE_WRITE = 1L << 13;
    static final int FI_HMEM_SYSTEM = 0;
    static final int FI_HMEM_CUDA = 1;
    /**
     * fi_mr_regattr flag: the memory is device memory the host cannot touch (cuMemAlloc's, not managed memory). shm
     * moves such regions by CUDA IPC, device to device; without the flag it bounces every write through host memory
     * (measured on the H200: 1.9 GB/s instead of about 44 GB/s at 1 MiB).
     */
    static final long FI_HMEM_DEVICE_ONLY = 1L << 46;

    private static final Logger LOG = LoggerFactory.getLogger(FabricRegions.class);
    /** Keys drawn at most while looking for one whose published entry is free (then the table marks itself full). */
    private static final int FREE_ENTRY_TRIES = 64;

    private final FabricEndpoint endpoint;
    private final MemorySegment attr;
    private final MemorySegment iov;
    private final MemorySegment out;
    private final SecureRandom random = new SecureRandom();
    private final long keyMask;
    private final boolean providerKeys;
    private final boolean virtualAddressing;
    private final boolean localRegistration;
    private final boolean hmem;
    private final boolean hmemDescriptors;

    /** Where this endpoint publishes its keys to its shm peers ({@link FabricShmKeys}); null elsewhere. */
    private final @Nullable FabricShmKeys published;

    private final Long2LongHashMap mrByKey = new Long2LongHashMap(0);
    private final Long2LongHashMap descByKey = new Long2LongHashMap(-1);
    private long[] starts = new long[8];
    private long[] ends = new long[8];
    private long[] keys = new long[8];
    private int count;

    FabricRegions(
            final FabricEndpoint endpoint,
            final Arena arena,
            final long caps,
            final @Nullable FabricShmKeys published) {
        this.endpoint = endpoint;
        this.published = published;
        this.attr = arena.allocate(MR_ATTR_BYTES, 8);
        this.iov = arena.allocate(IOVEC);
        this.out = arena.allocate(ADDRESS);
        final int mode = endpoint.mrMode();
        this.providerKeys = (mode & FabricDiscovery.FI_MR_PROV_KEY) != 0;
        this.virtualAddressing = (mode & FabricDiscovery.FI_MR_VIRT_ADDR) != 0;
        this.localRegistration = (mode & FabricDiscovery.FI_MR_LOCAL) != 0;
        this.hmem = (caps & FabricDiscovery.FI_HMEM) != 0;
        this.hmemDescriptors = (mode & FabricDiscovery.FI_MR_HMEM) != 0;
        final long keyBytes = endpoint.mrKeySize();
        this.keyMask = keyBytes <= 0 || keyBytes >= 8 ? Long.MAX_VALUE : (1L << (8 * keyBytes)) - 1;
    }

    boolean virtualAddressing() {
        return virtualAddressing;
    }

    boolean localRegistration() {
        return localRegistration;
    }

    /** The address to put in fi_rma_iov for {@code offset} into a peer's region that starts at {@code base}. */
    long remoteAddress(final long base, final long offset) {
        return virtualAddressing ? base + offset : offset;
    }

    /**
     * Registers {@code segment} for local use (sends, receives, the source of writes and the target of reads) and
     * for the remote access {@code allowed} grants: {@code FI_REMOTE_READ} and {@code FI_REMOTE_WRITE} only as it
     * says, so the provider refuses a peer's access that a forged descriptor would claim.
     *
     * @return the remote key, also the local handle
     * @throws InvalidRequestException    if the segment is not native memory
     * @throws DeviceUnavailableException if the provider cannot register {@code device}
     */
    long register(final MemorySegment segment, final Device device, final RegionAccess allowed) {
        if (!segment.isNative()) {
            throw new InvalidRequestException("fabric can only register native memory (Arena-allocated "
                    + "MemorySegments), not a heap segment of " + segment.byteSize() + " bytes");
        }
        // FI_SEND only where peers may read: tcp;ofi_rxm grants FI_REMOTE_READ at its tcp layer to every region
        // that may be sent from (its rendezvous sends are read by the receiver, rxm_mr_get_msg_access), which would
        // serve a forged read of a write-only region. Sends never leave from a user's region: the engine copies
        // them into its own buffers.
        final long access = (allowed.allowsRemoteRead() ? FI_SEND | FI_REMOTE_READ : 0)
                | FI_RECV
                | FI_READ
                | FI_WRITE
                | (allowed.allowsRemoteWrite() ? FI_REMOTE_WRITE : 0);
        return switch (device) {
            case Device.Host host -> add(segment.address(), segment.byteSize(), access, FI_HMEM_SYSTEM, 0, 0);
            case Device.Cuda cuda -> {
                if (!hmem) {
                    // Staging through host memory cannot work here: a remote write lands in the registered
                    // memory without this side learning of it, so nothing would know to copy it to the device.
                    throw new DeviceUnavailableException("fabric provider " + endpoint.provider()
                            + " offers no FI_HMEM, so it cannot register " + device
                            + " memory (libfabric 1.17's tcp and"
                            + " shm providers have none; efa and verbs ask for it, and " + FabricTransport.HMEM_OPTION
                            + "=true asks any provider); use the tcp transport, which stages device memory through"
                            + " pinned host memory");
                }
                try {
                    yield add(
                            segment.address(),
                            segment.byteSize(),
                            access,
                            FI_HMEM_CUDA,
                            cuda.ordinal(),
                            FI_HMEM_DEVICE_ONLY);
                } catch (final NativeCallException e) {
                    // FI_HMEM alone does not promise CUDA: a libfabric built without it offers FI_HMEM for host memory
                    throw new DeviceUnavailableException(
                            "fabric provider " + endpoint.provider() + " (libfabric at "
                                    + endpoint.library().path()
                                    + ") cannot register " + device + " memory with FI_HMEM_CUDA: " + e.getMessage()
                                    + "; the memory must be cuMemAlloc'd device memory and libfabric built"
                                    + " --with-cuda (.ci/gpu/libfabric-cuda.sh builds one)",
                            e);
                }
            }
        };
    }

    /** A local-only registration of a send or receive buffer, for providers that need FI_MR_LOCAL. */
    long registerLocal(final long address, final long length) {
        return add(address, length, FI_SEND | FI_RECV, FI_HMEM_SYSTEM, 0, 0);
    }

    private long add(
            final long address,
            final long length,
            final long access,
            final int iface,
            final int device,
            final long flags) {
        attr.fill((byte) 0);
        iov.set(JAVA_LONG, IOV_BASE, address);
        iov.set(JAVA_LONG, IOV_LEN, length);
        attr.set(ADDRESS, MR_ATTR_IOV, iov);
        attr.set(JAVA_LONG, MR_ATTR_IOV_COUNT, 1);
        attr.set(JAVA_LONG, MR_ATTR_ACCESS, access);
        attr.set(JAVA_LONG, MR_ATTR_REQUESTED_KEY, providerKeys ? 0 : freshKey());
        attr.set(JAVA_INT, MR_ATTR_IFACE, iface);
        attr.set(JAVA_INT, MR_ATTR_DEVICE, device);
        endpoint.library()
                .check(
                        "fi_mr_regattr(" + length + " bytes)",
                        endpoint.regAttr(attr, flags, out),
                        endpoint.errnoState());
        final long mr = out.get(JAVA_LONG, 0);
        final long key = FabricLibrary.pointer(mr + MR_KEY);
        mrByKey.put(key, mr);
        descByKey.put(key, FabricLibrary.pointer(mr + MR_MEM_DESC));
        if (count == starts.length) {
            starts = Arrays.copyOf(starts, count * 2);
            ends = Arrays.copyOf(ends, count * 2);
            keys = Arrays.copyOf(keys, count * 2);
        }
        starts[count] = address;
        ends[count] = address + length;
        keys[count] = key;
        count++;
        if (published != null) {
            final long start = virtualAddressing ? address : 0;
            published.put(
                    key,
                    start,
                    start + length,
                    ((access & FI_REMOTE_WRITE) != 0 ? FabricShmKeys.REMOTE_WRITE : 0)
                            | ((access & FI_REMOTE_READ) != 0 ? FabricShmKeys.REMOTE_READ : 0));
        }
        return key;
    }

    /** A random key unique in the domain, whose entry in the published table is free where there is one. */
    private long freshKey() {
        long key;
        int tries = 0;
        do {
            key = random.nextLong() & keyMask;
        } while (key == 0
                || mrByKey.containsKey(key)
                || (published != null && !published.isFree(key) && ++tries < FREE_ENTRY_TRIES));
        return key;
    }

    boolean isRegistered(final long key) {
        return mrByKey.containsKey(key);
    }

    /** Whether device memory registers with FI_HMEM (GPUDirect), so remote writes land in it directly. */
    boolean hmem() {
        return hmem;
    }

    /**
     * The local descriptor of the region {@code key} to pass with a post (0 where the provider needs none: neither
     * FI_MR_LOCAL nor FI_MR_HMEM, which asks it for device memory; host regions then get theirs too, which is allowed).
     */
    long desc(final long key) {
        if (!localRegistration && !hmemDescriptors) {
            return 0;
        }
        final long desc = descByKey.get(key);
        return desc == -1 ? 0 : desc;
    }

    /** The key of a registered region that covers {@code [address, address + length)}, or 0. */
    long covering(final long address, final long length) {
        for (int i = 0; i < count; i++) {
            if (starts[i] <= address && address + length <= ends[i]) {
                return keys[i];
            }
        }
        return 0;
    }

    /**
     * Closes the region; later remote accesses with its key fail. Unknown keys are ignored. On shm the key is revoked
     * from the published table first, and no peer is between its check and its post when the registration closes
     * (see {@link FabricShmKeys}).
     */
    void deregister(final long key) {
        close(key, true);
    }

    /**
     * Closes the region of {@code key}; with {@code revoking}, revokes it from the published table first (not while
     * the endpoint closes: its table is marked closed instead).
     */
    private void close(final long key, final boolean revoking) {
        final long mr = mrByKey.remove(key);
        descByKey.remove(key);
        if (mr == 0) {
            return;
        }
        if (revoking && published != null && published.publishes(key)) {
            if (!published.revoke(key)) {
                LOG.warn(
                        "shm: a peer was still posting {} ms after key {} was revoked (killed mid-post?); the"
                                + " registration closes all the same",
                        FabricShmKeys.QUIESCE_NANOS / 1_000_000,
                        key);
            }
        }
        for (int i = 0; i < count; i++) {
            if (keys[i] == key) {
                count--;
                starts[i] = starts[count];
                ends[i] = ends[count];
                keys[i] = keys[count];
                break;
            }
        }
        endpoint.library()
                .check("fi_close(mr)", endpoint.closeObject(MemorySegment.ofAddress(mr)), endpoint.errnoState());
    }

    /** Closes every region (before the endpoint closes). */
    void closeAll() {
        while (count > 0) {
            close(keys[count - 1], false);
        }
    }
}
