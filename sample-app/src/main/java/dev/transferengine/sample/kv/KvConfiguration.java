package dev.transferengine.sample.kv;

import dev.transferengine.RegionAccess;
import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.HostBuffer;
import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleProperties;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.client.WebClient;

/** The KV-cache nodes on the starter's engine: prefill in the prefill and demo roles, decode in the decode role. */
@Configuration(proxyBeanMethods = false)
class KvConfiguration {

    @Bean
    @ConditionalOnRole({Role.PREFILL, Role.DEMO})
    PrefillNode prefillNode(
            final ReactiveTransferEngine engine,
            final SampleProperties properties,
            final WebClient.Builder web,
            final MeterRegistry registry) {
        final KvLayout layout = KvLayout.of(properties.kv());
        final boolean pull = properties.kv().mode() == SampleProperties.Kv.Mode.PULL;
        // in pull mode decode nodes read the cache; nobody may write into it
        final HostBuffer cache = new HostBuffer(
                engine.engine(), layout.bytes(), pull ? RegionAccess.READ_ONLY : RegionAccess.READ_WRITE);
        final LayerCompute compute = new SimulatedLayerCompute(
                cache.segment(), layout, properties.kv().computeTime());
        return new PrefillNode(engine, layout, cache, compute, new DecodeClient(web.build()), registry, pull);
    }

    /** The demo role brings its own decode node, on a second engine (see {@code DemoConfiguration}). */
    @Bean
    @ConditionalOnRole(Role.DECODE)
    DecodeNode decodeNode(final ReactiveTransferEngine engine, final SampleProperties properties) {
        return new DecodeNode(
                engine, KvLayout.of(properties.kv()), properties.kv().receiveTimeout());
    }
}
