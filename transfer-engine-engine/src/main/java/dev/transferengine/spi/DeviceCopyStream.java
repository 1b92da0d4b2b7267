package dev.transferengine.spi;

import java.lang.foreign.MemorySegment;

/**
 * An ordered stream of asynchronous copies between device memory and pinned host memory (a
 * {@link StagingBuffer}). Copies finish in the order they were enqueued. Single-threaded: one thread (normally a
 * worker) calls every method but {@link #close()}; none of them blocks.
 */
public interface DeviceCopyStream extends AutoCloseable {

    /** Returned by the copy methods when {@link #capacity()} copies are pending: poll {@link #isDone} and retry. */
    long BUSY = -1;

    /** Copies that may be pending at once. */
    int capacity();

    /**
     * Enqueues a copy of {@code length} bytes from device address {@code deviceAddress} into {@code host}.
     *
     * @return a ticket for {@link #isDone(long)}, increasing with each copy, or {@link #BUSY}
     * @throws dev.transferengine.DeviceUnavailableException if the driver refused the copy
     */
    long copyToHost(long deviceAddress, MemorySegment host, long length);

    /**
     * Enqueues a copy of {@code length} bytes from {@code host} to device address {@code deviceAddress}.
     *
     * @return a ticket for {@link #isDone(long)}, increasing with each copy, or {@link #BUSY}
     * @throws dev.transferengine.DeviceUnavailableException if the driver refused the copy
     */
    long copyToDevice(MemorySegment host, long deviceAddress, long length);

    /**
     * Whether the copy with {@code ticket}, and so every earlier one, has finished. Never blocks.
     *
     * @throws dev.transferengine.DeviceUnavailableException if a copy failed on the device
     */
    boolean isDone(long ticket);

    /** Waits for pending copies (blocks), then frees the stream. Idempotent; any thread once the user is done. */
    @Override
    void close();
}
