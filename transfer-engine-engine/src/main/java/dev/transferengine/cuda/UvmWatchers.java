package dev.transferengine.cuda;

import dev.transferengine.IdleStrategyKind;
import dev.transferengine.UvmWatchListener;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.spi.UvmWatcherService;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The UVM watcher service of one GPU: 64-bit slots in pinned, device-mapped 4 KiB pages (512 a page, allocated on
 * demand), one polling thread that reads every used slot and queues each change, and a callback side that calls the
 * listeners. The polling thread starts with the first watcher.
 *
 * <p>The callback side runs either on the service's own thread or, with
 * {@link UvmWatchersConfig#withoutCallbackThread()}, on the caller's: an engine's callback thread calls
 * {@link #dispatch(int)} in its duty cycle, so watcher listeners run on the same thread as every other callback.
 */
public final class UvmWatchers implements UvmWatcherService {

    private static final Logger LOG = LoggerFactory.getLogger(UvmWatchers.class);
    private static final ThreadFactory DAEMONS = runnable -> {
        final Thread thread = new Thread(runnable);
        thread.setDaemon(true);
        return thread;
    };

    /** How long {@link #close()} waits for the GPU's launches before it leaves the freeing to a daemon thread. */
    static final int FREE_WAIT_SECONDS = 10;

    private final UvmWatchersConfig config;
    private final SlotPageSource pages;
    private final UvmSlotTable table;
    private final UvmChangeQueue queue;
    private final UvmDispatcher dispatcher;
    private final @Nullable AgentRunner callbackRunner;
    private @Nullable AgentRunner pollRunner;
    private boolean closed;

    UvmWatchers(final SlotPageSource pages, final UvmWatchersConfig config) {
        this.config = config;
        this.pages = pages;
        this.table = new UvmSlotTable(pages, config.maxWatchers());
        this.queue = new UvmChangeQueue(config.queueCapacity());
        this.dispatcher = new UvmDispatcher(table, queue, config.callbackCpu());
        this.callbackRunner = config.callbackThread() ? start(config.callbackIdle(), dispatcher) : null;
    }

    /**
     * A watcher service on CUDA device {@code device}. Blocks while the device's context is retained.
     *
     * @throws dev.transferengine.exceptions.DeviceUnavailableException if CUDA or the device cannot be used, with the reason
     */
    public static UvmWatchers open(final int device, final UvmWatchersConfig config) {
        Cuda.ensureDevice(device);
        return new UvmWatchers(SlotPageSource.cuda(CudaDevice.get(device)), config);
    }

    /**
     * Allocates a slot (initially 0) watched for changes; each change calls {@code listener} on the callback thread.
     * Any thread; blocks only when a new page must be allocated (once per 512 watchers).
     *
     * @throws EngineClosedException if the service is closed
     * @throws BackPressureException if {@link UvmWatchersConfig#maxWatchers()} slots are in use
     */
    @Override
    public UvmWatcher allocate(final UvmWatchListener listener) {
        final WatchEntry entry = table.allocate(listener);
        startPolling();
        return entry;
    }

    /**
     * Calls the listeners of up to {@code limit} queued changes. Only when the service has no callback thread of its
     * own, and then from one thread at a time (the engine's callback thread); never blocks.
     *
     * @return changes handled (0 = idle)
     */
    @Override
    public int dispatch(final int limit) {
        return dispatcher.dispatch(limit);
    }

    /** Number of open watchers. */
    public int size() {
        return table.size();
    }

    /** Changes handed to listeners so far. */
    public long deliveredCount() {
        return dispatcher.delivered();
    }

    /** Listener calls that threw (each released its watcher). */
    public long listenerErrorCount() {
        return dispatcher.listenerErrors();
    }

    int pageCount() {
        return table.pageCount();
    }

    /**
     * Stops the threads (joins them) and closes every watcher, then frees the pages once the GPU is idle: kernels
     * still storing into a watcher's slot would fault the GPU on a freed page. Waits for that up to
     * {@value #FREE_WAIT_SECONDS} s; past it the pages are freed by a daemon thread when the GPU's launches end,
     * and close returns. Queued changes are dropped. Idempotent; blocks for the joins and the driver calls.
     */
    @Override
    public void close() {
        final AgentRunner poller;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            poller = pollRunner;
        }
        if (poller != null) {
            poller.close();
        }
        if (callbackRunner != null) {
            callbackRunner.close();
        }
        table.closeWatchers();
        final Thread freer = DAEMONS.newThread(() -> {
            try {
                pages.awaitDeviceIdle();
            } catch (final RuntimeException e) {
                // a broken context: whether kernels still run cannot be told, so the pages stay allocated
                LOG.warn("UVM watcher pages not freed: waiting for the GPU's launches failed", e);
                return;
            }
            table.freePages();
        });
        freer.setName("te-uvm-free");
        freer.start();
        try {
            if (!freer.join(Duration.ofSeconds(FREE_WAIT_SECONDS))) {
                LOG.warn(
                        "UVM watchers closed while GPU launches still run after {} s: their {} page(s) are freed"
                                + " when those launches end",
                        FREE_WAIT_SECONDS,
                        table.pageCount());
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private synchronized void startPolling() {
        if (closed) {
            throw new EngineClosedException("UVM watchers are closed");
        }
        if (pollRunner == null) {
            pollRunner = start(config.pollIdle(), new UvmPoller(table, queue, config.pollCpu()));
        }
    }

    private static AgentRunner start(final IdleStrategyKind idle, final Agent agent) {
        final AgentRunner runner = new AgentRunner(
                idleStrategy(idle),
                error -> LOG.error("{} failed a duty cycle; it continues", agent.roleName(), error),
                null,
                agent);
        AgentRunner.startOnThread(runner, DAEMONS);
        return runner;
    }

    private static IdleStrategy idleStrategy(final IdleStrategyKind kind) {
        return switch (kind) {
            case SPIN -> new BusySpinIdleStrategy();
            case YIELD -> new YieldingIdleStrategy();
            case BACKOFF -> new BackoffIdleStrategy();
        };
    }
}
