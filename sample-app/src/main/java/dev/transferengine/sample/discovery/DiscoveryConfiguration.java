package dev.transferengine.sample.discovery;

import dev.transferengine.RegionDescriptor;
import dev.transferengine.autoconfigure.discovery.DescriptorRegistry;
import dev.transferengine.autoconfigure.discovery.RegisteredEngine;
import dev.transferengine.autoconfigure.discovery.RegistryChange;
import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.Role;
import dev.transferengine.sample.kv.DecodeNode;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.Disposable;

/** {@code sample.discovery=redis}: what the sample does with the starter's {@link DescriptorRegistry}. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = DiscoveryDefaults.PROPERTY, havingValue = "redis")
class DiscoveryConfiguration {

    /** The engines this node's watch sees, kept current for {@code GET /discovery/engines}. */
    @Bean(destroyMethod = "destroy")
    DiscoveredEngines discoveredEngines(final DescriptorRegistry registry) {
        return new DiscoveredEngines(registry);
    }

    /** {@code GET /discovery/engines}: the engines in the registry, as this node's watch last saw them. */
    @Bean
    RouterFunction<ServerResponse> discoveryRoutes(final DiscoveredEngines engines) {
        return RouterFunctions.route()
                .GET("/discovery/engines", request -> ServerResponse.ok().bodyValue(engines.now()))
                .build();
    }

    /** A decode node publishes its page pool as {@code kv-pool} once it is up. */
    @Bean
    @ConditionalOnRole(Role.DECODE)
    KvPoolPublisher kvPoolPublisher(final DescriptorRegistry registry, final DecodeNode decode) {
        return new KvPoolPublisher(registry, decode);
    }

    /** Publishes the decode node's page pool. */
    static final class KvPoolPublisher {

        private final DescriptorRegistry registry;
        private final DecodeNode decode;

        KvPoolPublisher(final DescriptorRegistry registry, final DecodeNode decode) {
            this.registry = registry;
            this.decode = decode;
        }

        @EventListener(ApplicationReadyEvent.class)
        void publish() {
            registry.publish(
                            "kv-pool",
                            RegionDescriptor.parse(decode.descriptor().region()))
                    .block(Duration.ofSeconds(30));
        }
    }

    /** A watch of the registry, from start-up until the registry closes at shutdown. */
    static final class DiscoveredEngines implements DisposableBean {

        private final Map<String, RegisteredEngine> engines = new ConcurrentSkipListMap<>();
        private final Disposable watch;

        DiscoveredEngines(final DescriptorRegistry registry) {
            this.watch = registry.watch().subscribe(this::apply);
        }

        private void apply(final RegistryChange change) {
            if (change.kind() == RegistryChange.Kind.VANISHED) {
                engines.remove(change.name());
            } else {
                engines.put(change.name(), change.engine());
            }
        }

        List<DiscoveredEngine> now() {
            return engines.values().stream().map(DiscoveredEngine::of).toList();
        }

        @Override
        public void destroy() {
            watch.dispose();
        }
    }
}
