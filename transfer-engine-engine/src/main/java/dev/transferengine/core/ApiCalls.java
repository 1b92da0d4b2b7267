package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.RegionAccess;
import dev.transferengine.TransferListener;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

/** The engine's checks of API arguments and its waits for workers, on the caller's thread. */
final class ApiCalls {

    private ApiCalls() {}

    /**
     * Refuses memory that cannot be a region: on the heap, read-only while peers may write, or confined to a thread
     * other than {@code worker}.
     *
     * @throws InvalidRequestException naming the problem
     */
    static void registrable(
            final MemorySegment segment, final Device device, final RegionAccess access, final Thread worker) {
        if (device instanceof Device.Host && !segment.isNative()) {
            throw new InvalidRequestException(
                    "only native segments can be registered (allocate with an Arena), got " + segment);
        }
        if (segment.isReadOnly() && access.allowsRemoteWrite()) {
            throw new InvalidRequestException("a read-only segment can only be registered READ_ONLY: peers could"
                    + " write into it as " + access + ", got " + segment);
        }
        if (!segment.isAccessibleBy(worker)) {
            throw new InvalidRequestException("segment " + segment + " is confined to one thread, but the engine's "
                    + "worker and peers' writes use it too; allocate it from a shared arena (Arena.ofShared(), "
                    + "Arena.ofAuto() or Arena.global())");
        }
    }

    /** Refuses a receive pool's size out of range, or one that would hold too much memory off the heap. */
    static void receivePoolSize(final String method, final int bufferSize, final int count) {
        if (bufferSize < 1 || count < 1 || count > 0xFF_FFFF) {
            throw new InvalidRequestException(
                    method + " needs bufferSize >= 1 and 1 <= count <= 16777215, got " + bufferSize + " x " + count);
        }
        if ((long) bufferSize * count > Engine.MAX_RECEIVE_POOL_BYTES) {
            throw new InvalidRequestException(method + " of " + bufferSize + " x " + count + " = "
                    + (long) bufferSize * count + " bytes exceeds the " + Engine.MAX_RECEIVE_POOL_BYTES
                    + " bytes one pool may hold off the heap; use fewer or smaller buffers");
        }
    }

    /**
     * {@code value}, refused with a typed error if null: callers without NullAway (Kotlin, reflection, a stray null)
     * must fail at the call, not later on the callback thread.
     */
    @SuppressWarnings("NullAway") // the check is for callers outside NullAway's reach
    static <T> T given(final @Nullable T value, final String what) {
        if (value == null) {
            throw new InvalidRequestException(what + " must not be null");
        }
        return value;
    }

    /** A listener that completes {@code future}: null when done, exceptionally with the operation's error. */
    static TransferListener completing(final CompletableFuture<Void> future) {
        return new TransferListener() {
            @Override
            public void onDone() {
                future.complete(null);
            }

            @Override
            public void onError(final TransferEngineException error) {
                future.completeExceptionally(error);
            }
        };
    }

    static <T extends @Nullable Object> T await(
            final CompletableFuture<T> future, final Duration timeout, final String what) {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (final ExecutionException e) {
            final Throwable cause = Objects.requireNonNullElse(e.getCause(), e);
            if (cause instanceof TransferEngineException engineError) {
                throw engineError;
            }
            throw new TransferEngineException(what + " failed: " + cause, cause);
        } catch (final TimeoutException e) {
            throw new TransferTimeoutException(what + " did not finish within " + timeout);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransferEngineException("interrupted while " + what, e);
        }
    }
}
