package dev.transferengine.sample.demo;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.observation.ObservationTransferObserver;
import dev.transferengine.reactive.ReactiveOptions;
import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.reactive.TransferObserver;
import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleProperties;
import dev.transferengine.sample.kv.DecodeNode;
import dev.transferengine.sample.kv.KvLayout;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * The decode half of the demo: a second engine, {@code decodeEngine}, on the loopback interface, so that the demo's
 * pages really cross sockets between two engines, as they would between two machines. The starter's engine,
 * {@code transferEngine}, serves the prefill half.
 *
 * <p>Both are beans, so the starter's health, meters and endpoint cover both. This is an auto-configuration ordered
 * after the starter's only because the starter backs off when the application defines a {@link TransferEngine} of
 * its own: the starter's engine must exist first.
 */
@AutoConfiguration(after = TransferEngineAutoConfiguration.class)
@ConditionalOnRole(Role.DEMO)
public final class DemoDecodeAutoConfiguration {

    DemoDecodeAutoConfiguration() {}

    /** As many NICs as prefill's group 0, so that every prefill NIC has a decode NIC to write to. */
    @Bean
    TransferEngine decodeEngine(@Qualifier("transferEngine") final TransferEngine prefillEngine) {
        return TransferEngine.builder()
                .transport("tcp")
                .bindAddress("127.0.0.1")
                .basePort(0)
                .group(prefillEngine.nicCount(0))
                .build();
    }

    /** Destroyed before {@code decodeEngine}, which it depends on, so its pool is deregistered from an open engine. */
    @Bean
    DecodeNode decodeNode(
            @Qualifier("decodeEngine") final TransferEngine decodeEngine,
            final SampleProperties properties,
            final ObjectProvider<TransferObserver> observer) {
        // observed like the starter's facade, so decode's imm waits show up next to prefill's writes
        return new DecodeNode(
                new ReactiveTransferEngine(
                        decodeEngine,
                        ReactiveOptions.DEFAULTS,
                        ObservationTransferObserver.forEngine(
                                observer.getIfUnique(() -> TransferObserver.NONE), "decodeEngine")),
                KvLayout.of(properties.kv()),
                properties.kv().receiveTimeout());
    }
}
