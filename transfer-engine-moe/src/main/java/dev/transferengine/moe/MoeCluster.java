package dev.transferengine.moe;

import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Every rank of an exchange in one process, each on its own engine (the caller's), each driven by its own platform
 * thread per layer: what te-bench and the in-process tests run. The ranks talk only through their engines, exactly as
 * in separate processes. One thread drives a cluster.
 */
public final class MoeCluster implements AutoCloseable {

    private final List<MoeDispatcher> dispatchers = new ArrayList<>();
    private final List<MoeExpertRank> experts = new ArrayList<>();
    private final ExecutorService threads;

    /**
     * Creates and connects the ranks. Blocks while the engines resolve their peers.
     *
     * @param model the model (shape, expert weights)
     * @param dispatcherEngines one engine per dispatcher (stay open on {@link #close()})
     * @param expertEngines one engine per expert rank (stay open on {@link #close()})
     * @param mode routed or padded
     * @param layerTimeout how long a layer may wait for a silent peer
     * @throws IllegalArgumentException if the engine counts differ from the shape's
     */
    public MoeCluster(
            final MoeModel model,
            final List<TransferEngine> dispatcherEngines,
            final List<TransferEngine> expertEngines,
            final ExchangeMode mode,
            final Duration layerTimeout) {
        final MoeShape shape = model.shape();
        if (dispatcherEngines.size() != shape.dispatchers() || expertEngines.size() != shape.expertRanks()) {
            throw new IllegalArgumentException("the shape wants " + shape.dispatchers() + " dispatcher and "
                    + shape.expertRanks() + " expert engines, got " + dispatcherEngines.size() + " and "
                    + expertEngines.size());
        }
        this.threads = Executors.newFixedThreadPool(shape.dispatchers() + shape.expertRanks());
        try {
            for (int d = 0; d < shape.dispatchers(); d++) {
                dispatchers.add(new MoeDispatcher(dispatcherEngines.get(d), shape, d, mode, layerTimeout));
            }
            for (int e = 0; e < shape.expertRanks(); e++) {
                experts.add(
                        new MoeExpertRank(expertEngines.get(e), shape, e, model.expertsOfRank(e), mode, layerTimeout));
            }
            final MoePeers peers = new MoePeers(
                    dispatchers.stream().map(MoeDispatcher::descriptor).toList(),
                    experts.stream().map(MoeExpertRank::descriptor).toList());
            dispatchers.forEach(dispatcher -> dispatcher.connect(peers));
            experts.forEach(expert -> expert.connect(peers));
        } catch (final RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * The ranks' descriptors.
     *
     * @return dispatchers then expert ranks
     */
    public List<RegionDescriptor> descriptors() {
        final List<RegionDescriptor> all = new ArrayList<>();
        dispatchers.forEach(d -> all.add(d.descriptor()));
        experts.forEach(e -> all.add(e.descriptor()));
        return all;
    }

    /**
     * Runs one layer on every rank at once. Blocks until every rank finished it.
     *
     * @param layer the layer number
     * @param tokens per dispatcher, its T x H bf16 input
     * @param routings per dispatcher, its routing
     * @param outs per dispatcher, where its combined output goes
     * @return the timings, dispatchers first, then expert ranks
     * @throws MoeRankFailedException the first rank failure, in rank order (later ones are suppressed)
     */
    public List<LayerTimings> runLayer(
            final int layer,
            final List<MemorySegment> tokens,
            final List<TokenRouting> routings,
            final List<MemorySegment> outs) {
        final List<Future<LayerTimings>> running = new ArrayList<>();
        for (int d = 0; d < dispatchers.size(); d++) {
            final MoeDispatcher dispatcher = dispatchers.get(d);
            final MemorySegment in = tokens.get(d);
            final TokenRouting routing = routings.get(d);
            final MemorySegment out = outs.get(d);
            running.add(threads.submit(() -> dispatcher.runLayer(layer, in, routing, out)));
        }
        for (final MoeExpertRank expert : experts) {
            running.add(threads.submit(() -> expert.runLayer(layer)));
        }
        final List<LayerTimings> timings = new ArrayList<>();
        RuntimeException first = null;
        for (final Future<LayerTimings> rank : running) {
            try {
                timings.add(rank.get());
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while layer " + layer + " ran", e);
            } catch (final ExecutionException e) {
                final RuntimeException failure = e.getCause() instanceof RuntimeException runtime
                        ? runtime
                        : new IllegalStateException(e.getCause());
                if (first == null) {
                    first = failure;
                } else {
                    first.addSuppressed(failure);
                }
            }
        }
        if (first != null) {
            throw first;
        }
        return timings;
    }

    /**
     * The expert rank at an index, e.g. to close one on purpose.
     *
     * @param index 0..E-1
     * @return the rank
     */
    public MoeExpertRank expert(final int index) {
        return experts.get(index);
    }

    /** Frees every rank's region and stops the threads; the engines stay open. */
    @Override
    public void close() {
        threads.shutdownNow();
        dispatchers.forEach(MoeDispatcher::close);
        experts.forEach(MoeExpertRank::close);
    }
}
