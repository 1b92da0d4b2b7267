package dev.transferengine.sample.moe;

import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.moe.ExchangeMode;
import dev.transferengine.moe.LayerTimings;
import dev.transferengine.moe.MoeCluster;
import dev.transferengine.moe.MoeModel;
import dev.transferengine.moe.MoeRankFailedException;
import dev.transferengine.moe.MoeShape;
import dev.transferengine.moe.TokenRouting;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs MoE layers on a thread of its own: the starter's engine dispatches, expert ranks on engines this node opens
 * compute, and each layer's combined output is checked byte for byte against the single-process reference and then fed
 * into the next layer. Meters: timers {@code sample.moe.dispatch}, {@code sample.moe.combine}, {@code sample.moe.layer}
 * (shown on the dashboard), counter {@code sample.moe.layers} by outcome. A rank failure stops the loop with the rank
 * named ({@link #lastFailure()}, and a warning in the log): the exchange is then failed for good.
 */
public final class MoeNode implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(MoeNode.class);

    private final TransferEngine dispatcherEngine;
    private final MoeProperties properties;
    private final MoeShape shape;
    private final MoeModel model;
    private final Timer dispatch;
    private final Timer combine;
    private final Timer layerTimer;
    private final Counter verified;
    private final Counter mismatched;
    private final Counter failed;
    private final AtomicLong verifiedLayers = new AtomicLong();
    private final List<TransferEngine> experts = new ArrayList<>();
    private volatile @Nullable String lastFailure;
    private volatile @Nullable Thread loop;

    MoeNode(final TransferEngine dispatcherEngine, final MoeProperties properties, final MeterRegistry registry) {
        this.dispatcherEngine = dispatcherEngine;
        this.properties = properties;
        this.shape = new MoeShape(
                properties.tokens(),
                properties.hidden(),
                properties.topK(),
                properties.experts(),
                properties.expertRanks(),
                1);
        this.model = new MoeModel(shape, 20, properties.width());
        this.dispatch = Timer.builder("sample.moe.dispatch")
                .description("MoE dispatch: first post until every expert rank acknowledged the tokens")
                .register(registry);
        this.combine = Timer.builder("sample.moe.combine")
                .description("MoE combine: the slowest expert rank's combine write, post to acknowledgement")
                .register(registry);
        this.layerTimer = Timer.builder("sample.moe.layer")
                .description("MoE layer: dispatch, expert compute, combine and barrier")
                .register(registry);
        this.verified = layers(registry, "verified");
        this.mismatched = layers(registry, "mismatch");
        this.failed = layers(registry, "failed");
    }

    private static Counter layers(final MeterRegistry registry, final String outcome) {
        return Counter.builder("sample.moe.layers")
                .description("MoE layers run, by outcome against the reference")
                .tag("outcome", outcome)
                .register(registry);
    }

    /**
     * Layers whose output matched the reference byte for byte. Any thread.
     *
     * @return the count since start
     */
    public long verifiedLayers() {
        return verifiedLayers.get();
    }

    /**
     * Why the loop stopped, naming the rank, or null while it runs. Any thread.
     *
     * @return the failure's message, or null
     */
    public @Nullable String lastFailure() {
        return lastFailure;
    }

    /**
     * The engine of an expert rank, e.g. to stop it and see the layer fail naming it.
     *
     * @param rank 0..E-1
     * @return its engine
     */
    public TransferEngine expertEngine(final int rank) {
        return experts.get(rank);
    }

    @Override
    public void start() {
        final TransferEngineBuilder builder =
                TransferEngine.builder().transport(dispatcherEngine.transport()).bindAddress("127.0.0.1");
        final String provider = properties.provider();
        if (provider != null) {
            builder.option("fabric.provider", provider);
        }
        for (int e = 0; e < shape.expertRanks(); e++) {
            experts.add(builder.build());
        }
        final Thread thread = Thread.ofPlatform().name("moe-layers").daemon().unstarted(this::run);
        loop = thread;
        thread.start();
        LOG.info(
                "moe: {} tokens x {} hidden, top-{} of {} experts over {} expert ranks, a layer every {}",
                shape.tokens(),
                shape.hidden(),
                shape.topK(),
                shape.experts(),
                shape.expertRanks(),
                properties.interval());
    }

    private void run() {
        final long bytes = shape.tokens() * shape.rowBytes();
        try (Arena arena = Arena.ofShared();
                MoeCluster cluster = new MoeCluster(
                        model, List.of(dispatcherEngine), experts, ExchangeMode.ROUTED, properties.layerTimeout())) {
            MemorySegment tokens = arena.allocate(bytes);
            MemorySegment out = arena.allocate(bytes);
            final MemorySegment expected = arena.allocate(bytes);
            model.fillTokens(0, 0, tokens);
            for (int layer = 0; !Thread.currentThread().isInterrupted(); layer++) {
                final TokenRouting routing = model.route(tokens);
                final List<LayerTimings> timings =
                        cluster.runLayer(layer, List.of(tokens), List.of(routing), List.of(out));
                record(timings);
                model.reference(tokens, routing, expected);
                if (out.mismatch(expected) >= 0) {
                    mismatched.increment();
                    LOG.warn("moe: layer {} differs from the reference at byte {}", layer, out.mismatch(expected));
                    model.fillTokens(0, layer, tokens); // start over from a fresh input
                } else {
                    verified.increment();
                    verifiedLayers.incrementAndGet();
                    final MemorySegment next = tokens;
                    tokens = out;
                    out = next;
                }
                Thread.sleep(properties.interval()); // pacing between layers, not synchronisation
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (final MoeRankFailedException e) {
            failed.increment();
            lastFailure = e.getMessage();
            LOG.warn("moe: stopped: {}", e.getMessage());
        } catch (final RuntimeException e) {
            failed.increment();
            lastFailure = e.toString();
            LOG.warn("moe: stopped", e);
        }
    }

    private void record(final List<LayerTimings> timings) {
        long slowestCombine = 0;
        for (int r = 1; r < timings.size(); r++) {
            slowestCombine = Math.max(slowestCombine, timings.get(r).combineNanos());
        }
        dispatch.record(timings.getFirst().dispatchNanos(), TimeUnit.NANOSECONDS);
        combine.record(slowestCombine, TimeUnit.NANOSECONDS);
        layerTimer.record(timings.getFirst().layerNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public void stop() {
        final Thread running = loop;
        loop = null;
        if (running != null) {
            running.interrupt();
            try {
                running.join(properties.layerTimeout().toMillis() + 1000);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        experts.forEach(TransferEngine::close);
        experts.clear();
    }

    @Override
    public boolean isRunning() {
        return loop != null;
    }
}
