package dev.transferengine.boot.test;

import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineBuilderCustomizer;
import dev.transferengine.test.HoldingTransport;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * With {@value #PROPERTY}{@code =true}, runs the application's auto-configured engine as tcp on 127.0.0.1 under a
 * {@link LoopbackClusterKey} generated for this context, whatever {@code transfer-engine.transport},
 * {@code bind-address}, {@code base-port}, {@code tcp.cluster-key} and {@code tcp.ssl.bundle} say (ports are
 * ephemeral, so parallel test contexts do not collide), and adds a {@link LoopbackPeer} under the same key. An
 * engine bean of the application's own is left alone (then there is no customization to apply), but the peer is
 * still added. With {@value #FAULTS_PROPERTY}{@code =true} as well, both engines run the conformance kit's holding
 * transport over tcp and a manual clock, and {@link TransferEngineFaults} injects faults.
 */
@AutoConfiguration(before = TransferEngineAutoConfiguration.class)
@ConditionalOnProperty(name = LoopbackTransferEngineAutoConfiguration.PROPERTY, havingValue = "true")
public final class LoopbackTransferEngineAutoConfiguration {

    /** The switch; a prefix of its own, since the starter refuses unknown {@code transfer-engine.*} properties. */
    public static final String PROPERTY = "transfer-engine-test.loopback";

    /** With {@link #PROPERTY}: both engines on the kit's holding transport and a manual clock, and {@link TransferEngineFaults}. */
    public static final String FAULTS_PROPERTY = "transfer-engine-test.faults";

    /** Short enough that a test that waits for something that never comes fails in good time. */
    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(20);

    /** Creates the configuration; Spring calls it. */
    public LoopbackTransferEngineAutoConfiguration() {}

    /**
     * The key both engines share.
     *
     * @return a fresh key for this context
     */
    @Bean
    LoopbackClusterKey loopbackClusterKey() {
        return LoopbackClusterKey.generate();
    }

    /**
     * Puts the application's engine on loopback; runs after the properties were applied, so it wins over them.
     *
     * @param key the shared key
     * @return the customizer
     */
    @Bean
    TransferEngineBuilderCustomizer loopbackTransferEngineCustomizer(
            final LoopbackClusterKey key, final ObjectProvider<FaultClock> faults) {
        return builder -> loopback(builder, key, faults.getIfAvailable());
    }

    /**
     * The test's side of the pair.
     *
     * @param key the shared key
     * @return the peer, closed with the context
     */
    @Bean(destroyMethod = "close")
    LoopbackPeer loopbackPeer(final LoopbackClusterKey key, final ObjectProvider<FaultClock> faults) {
        return new LoopbackPeer(loopback(TransferEngine.builder(), key, faults.getIfAvailable())
                .operationTimeout(OPERATION_TIMEOUT)
                .build());
    }

    private static TransferEngineBuilder loopback(
            final TransferEngineBuilder builder, final LoopbackClusterKey key, final @Nullable FaultClock faults) {
        builder.transport("tcp")
                .bindAddress("127.0.0.1")
                .basePort(0)
                .tls(null)
                .option("tcp.clusterKeyFile", "") // empty is unset: the generated key replaces a configured file
                .option("tcp.clusterKey", key.base64());
        if (faults != null) {
            builder.option(HoldingTransport.WRAPPED, "tcp")
                    .transport(HoldingTransport.NAME)
                    .clock(faults);
        }
        return builder;
    }

    /** Fault injection: the clock both engines read, and what the test drives the faults with. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = FAULTS_PROPERTY, havingValue = "true")
    static final class FaultsConfiguration {

        @Bean
        FaultClock loopbackFaultClock() {
            return new FaultClock();
        }

        @Bean
        TransferEngineFaults transferEngineFaults(
                final TransferEngine transferEngine, final LoopbackPeer peer, final FaultClock clock) {
            return new TransferEngineFaults(transferEngine, peer, clock);
        }
    }
}
