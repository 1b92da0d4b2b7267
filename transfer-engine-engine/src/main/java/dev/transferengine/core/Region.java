package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.MrDesc;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/** A registered region: its memory, its key on each NIC of its group, and its descriptor. */
final class Region implements MemoryRegion {

    private final Engine engine;
    private final MemorySegment segment;
    private final Device device;
    private final int group;
    private final long[] keys;
    private final MrDesc descriptor;
    private final AtomicBoolean registered = new AtomicBoolean(true);

    Region(final Engine engine, final MemorySegment segment, final Device device, final int group, final long[] keys,
           final MrDesc descriptor) {
        this.engine = engine;
        this.segment = segment;
        this.device = device;
        this.group = group;
        this.keys = keys;
        this.descriptor = descriptor;
    }

    boolean belongsTo(final Engine owner) {
        return engine == owner;
    }

    /** The key on NIC {@code nic} of its group (the local handle for that NIC). */
    long key(final int nic) {
        return keys[nic];
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
    public MrDesc descriptor() {
        return descriptor;
    }

    @Override
    public boolean isRegistered() {
        return registered.get();
    }

    @Override
    public String toString() {
        return "MemoryRegion[" + device + ", group " + group + ", 0x" + Long.toHexString(segment.address()) + "+"
            + segment.byteSize() + (isRegistered() ? "" : ", deregistered") + "]";
    }
}
