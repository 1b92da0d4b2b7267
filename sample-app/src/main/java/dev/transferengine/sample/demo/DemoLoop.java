package dev.transferengine.sample.demo;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.transferengine.sample.SampleProperties;
import dev.transferengine.sample.kv.PrefillNode;

/**
 * Once the server is up, transfers a KV cache from the demo's prefill to its decode at a steady pace, through the
 * same HTTP API a remote decode node would serve, so that health, metrics and the actuator endpoint show live
 * figures. Each transfer logs one summary line (see {@link PrefillNode}); a failed one logs a warning and the loop
 * goes on.
 */
final class DemoLoop implements ApplicationListener<ApplicationReadyEvent>, DisposableBean {

    private static final Logger LOG = LoggerFactory.getLogger(DemoLoop.class);

    private final PrefillNode prefill;
    private final SampleProperties.Demo demo;
    private volatile Disposable loop = () -> { };

    DemoLoop(final PrefillNode prefill, final SampleProperties.Demo demo) {
        this.prefill = prefill;
        this.demo = demo;
    }

    @Override
    public void onApplicationEvent(final ApplicationReadyEvent event) {
        final Integer port = event.getApplicationContext().getEnvironment().getProperty("local.server.port", Integer.class);
        if (port == null) {
            LOG.warn("demo loop not started: no web server port is known");
            return;
        }
        final String decode = "http://127.0.0.1:" + port;
        LOG.info("demo: transferring {} tokens to the decode node at {} every {}", demo.tokens(), decode, demo.interval());
        loop = Flux.interval(Duration.ZERO, demo.interval())
            .onBackpressureDrop()
            .concatMap(tick -> prefill.transfer(demo.tokens(), decode)
                .onErrorResume(error -> {
                    LOG.warn("demo transfer failed: {}", error.toString());
                    return Mono.empty();
                }), 1)
            .subscribe();
    }

    @Override
    public void destroy() {
        loop.dispose();
    }
}
