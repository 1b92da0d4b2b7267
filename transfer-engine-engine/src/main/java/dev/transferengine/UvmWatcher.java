package dev.transferengine;

/**
 * A 64-bit slot in pinned, device-mapped host memory that a GPU kernel (also one inside a CUDA graph) writes; a
 * polling thread sees each change and calls the watcher's {@link UvmWatchListener} on the callback thread.
 *
 * <p>Kernels write the slot with a volatile 64-bit store followed by {@code __threadfence_system()}. The slot starts
 * at 0. Stop the GPU from writing before closing: a slot is reused by the next watcher once released.
 */
public interface UvmWatcher extends AutoCloseable {

    /**
     * The slot's address for a kernel.
     *
     * @return the device pointer, to pass to a kernel as a {@code uint64_t*}
     */
    long devicePointer();

    /**
     * The slot's current value, read from host memory. Any thread; does not block.
     *
     * @return the last value a kernel stored, or 0 before the first store and once the watcher or its engine is
     *     closed (the slot is reset then, and its page may be freed)
     */
    long value();

    /**
     * Whether the slot is still watched.
     *
     * @return false once closed, or released because its listener returned false or threw
     */
    boolean isOpen();

    /**
     * Releases the slot (reset to 0). Idempotent; any thread; does not block. Called on the callback thread (e.g.
     * from a listener) no further call follows; from another thread, a call already under way may still finish.
     */
    @Override
    void close();
}
