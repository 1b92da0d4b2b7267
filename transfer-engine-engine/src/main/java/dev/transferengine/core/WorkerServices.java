package dev.transferengine.core;

import dev.transferengine.spi.Transport;

import java.util.function.LongSupplier;

/**
 * What every worker of an engine shares: the transport its NICs open from, the imm table, the callback thread,
 * the counters, the send buffers, the submission pool and the clock. Built once by the engine; thread-safe parts
 * only, so a worker may hold it for its life.
 *
 * @param transport where each group's domains are opened, and reopened after a worker failure
 * @param imms the engine-wide imm counts
 * @param callbacks the thread that runs user code
 * @param counters the engine's and the NICs' counters
 * @param sendBuffers the pool that two-sided sends copy their message into
 * @param pool the recycled submissions
 * @param clock nanoseconds, for deadlines and backoff; a manual clock in tests
 */
record WorkerServices(
        Transport transport,
        ImmCountTable imms,
        CallbackDispatcher callbacks,
        Counters counters,
        SendBuffers sendBuffers,
        Submissions pool,
        LongSupplier clock) {}
