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

    /**
     * How many copies may be pending at once.
     *
     * @return the capacity, fixed for the stream's life; one more copy answers {@link #BUSY}
     */
    int capacity();

    /**
     * Enqueues a copy of {@code length} bytes from device address {@code deviceAddress} into {@code host}.
     *
     * @param deviceAddress the device pointer to copy from
     * @param host pinned host memory (a {@link StagingBuffer}'s segment) at least {@code length} bytes long; must not
     *     be touched until the copy is done
     * @param length bytes to copy
     *
     * @return a ticket for {@link #isDone(long)}, increasing with each copy, or {@link #BUSY}
     * @throws dev.transferengine.exceptions.DeviceUnavailableException if the driver refused the copy
     */
    long copyToHost(long deviceAddress, MemorySegment host, long length);

    /**
     * Enqueues a copy of {@code length} bytes from {@code host} to device address {@code deviceAddress}.
     *
     * @param host pinned host memory at least {@code length} bytes long; must not change until the copy is done
     * @param deviceAddress the device pointer to copy to
     * @param length bytes to copy
     *
     * @return a ticket for {@link #isDone(long)}, increasing with each copy, or {@link #BUSY}
     * @throws dev.transferengine.exceptions.DeviceUnavailableException if the driver refused the copy
     */
    long copyToDevice(MemorySegment host, long deviceAddress, long length);

    /**
     * Whether the copy with {@code ticket}, and so every earlier one, has finished. Never blocks. After {@link
     * #close()}, which waits for every copy, it answers true (or throws what a failed copy left), never a closed
     * error: an answer held on a copy may be looked at after its stream was freed.
     *
     * @param ticket a ticket a copy method returned
     * @return true once that copy and every earlier one finished
     *
     * @throws dev.transferengine.exceptions.DeviceUnavailableException if a copy failed on the device
     */
    boolean isDone(long ticket);

    /** Waits for pending copies (blocks), then frees the stream. Idempotent; any thread once the user is done. */
    @Override
    void close();
}
