package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * A registered region: its memory, its key on each NIC of its group, and its descriptor. Keys change when the
 * region is re-keyed (or re-registered after its worker restarted); keys and descriptor change together, as one
 * immutable pair behind a volatile, so any thread reads a matching pair.
 */
final class Region implements MemoryRegion {

    /** The keys on each NIC and the descriptor that names them. */
    static final class Keys {
        private final long[] keys;
        private final RegionDescriptor descriptor;

        Keys(final long[] keys, final RegionDescriptor descriptor) {
            this.keys = keys;
            this.descriptor = descriptor;
        }

        /** The key on NIC {@code nic}. */
        long key(final int nic) {
            return keys[nic];
        }

        RegionDescriptor descriptor() {
            return descriptor;
        }
    }

    /** The engine that registered a region: re-keys it on its group's worker. */
    interface Owner {
        RegionDescriptor rekey(Region region);

        /** The region's worker deregistered it on its own (its memory was freed): stop listing it. */
        default void forget(final Region region) {}
    }

    private final Owner owner;
    private final MemorySegment segment;
    private final Device device;
    private final int group;
    /** The device allocation the scope sweep watches; null for host memory or where the provider cannot tell. */
    private final @Nullable DeviceAllocation allocation;
    /** The memory, where the engine allocated it and frees it after deregistration; null for the caller's memory. */
    private final @Nullable EngineAllocation owned;

    private final AtomicBoolean registered = new AtomicBoolean(true);
    private volatile Keys keys;

    Region(
            final Owner owner,
            final MemorySegment segment,
            final Device device,
            final int group,
            final Keys keys,
            final @Nullable DeviceAllocation allocation,
            final @Nullable EngineAllocation owned) {
        this.owner = owner;
        this.segment = segment;
        this.device = device;
        this.group = group;
        this.keys = keys;
        this.allocation = allocation;
        this.owned = owned;
    }

    @SuppressWarnings("ReferenceEquality") // identity on purpose: the very engine that registered it
    boolean belongsTo(final Owner engine) {
        return owner == engine;
    }

    /** The key on NIC {@code nic} of its group (the local handle for that NIC). */
    long key(final int nic) {
        return keys.key(nic);
    }

    @Nullable DeviceAllocation allocation() {
        return allocation;
    }

    @Nullable EngineAllocation owned() {
        return owned;
    }

    Keys keys() {
        return keys;
    }

    /** Worker of its group: the region is registered under new keys now. */
    void keys(final Keys value) {
        keys = value;
    }

    /** Tells the engine that registered it that its worker deregistered it; worker thread. */
    void forget() {
        owner.forget(this);
    }

    /** Marks the region deregistered; true for the one caller that did it. */
    boolean markDeregistered() {
        return registered.compareAndSet(true, false);
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public int group() {
        return group;
    }

    @Override
    public RegionDescriptor descriptor() {
        return keys.descriptor();
    }

    @Override
    public boolean isRegistered() {
        return registered.get();
    }

    @Override
    public RegionDescriptor rekey() {
        return owner.rekey(this);
    }

    @Override
    public String toString() {
        return "MemoryRegion[" + device + ", group " + group + ", 0x" + Long.toHexString(segment.address()) + "+"
                + segment.byteSize() + (isRegistered() ? "" : ", deregistered") + "]";
    }
}
