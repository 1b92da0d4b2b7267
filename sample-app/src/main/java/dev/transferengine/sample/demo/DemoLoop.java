package dev.transferengine.sample.demo;

import dev.transferengine.sample.SampleProperties;
import dev.transferengine.sample.kv.PrefillNode;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.Environment;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Transfers a KV cache from the demo's prefill to its decode at a steady pace, through the same HTTP API a remote
 * decode node would serve, so that health, metrics and the actuator endpoint show live figures. Each transfer logs
 * one summary line (see {@link PrefillNode}); a failed one logs a warning and the loop goes on.
 *
 * <p>Starts in the last lifecycle phase, after the web server (whose port it needs), and so stops first, before the
 * server and the engine.
 */
final class DemoLoop implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(DemoLoop.class);

    private final PrefillNode prefill;
    private final SampleProperties.Demo demo;
    private final Environment environment;
    private volatile @Nullable Disposable loop;

    DemoLoop(final PrefillNode prefill, final SampleProperties.Demo demo, final Environment environment) {
        this.prefill = prefill;
        this.demo = demo;
        this.environment = environment;
    }

    @Override
    public void start() {
        final Integer port = environment.getProperty("local.server.port", Integer.class);
        if (port == null) {
            throw new IllegalStateException("the demo needs the web server's port, and none is known");
        }
        final String decode = "http://127.0.0.1:" + port;
        LOG.info(
                "demo: transferring {} tokens to the decode node at {} every {}",
                demo.tokens(),
                decode,
                demo.interval());
        loop = Flux.interval(Duration.ZERO, demo.interval())
                .onBackpressureDrop()
                .concatMap(
                        tick -> prefill.transfer(demo.tokens(), decode).onErrorResume(error -> {
                            LOG.warn("demo transfer failed: {}", error.toString());
                            return Mono.empty();
                        }),
                        1)
                .subscribe();
    }

    @Override
    public void stop() {
        final Disposable running = loop;
        loop = null;
        if (running != null) {
            running.dispose();
        }
    }

    @Override
    public boolean isRunning() {
        return loop != null;
    }

    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }
}
