package dev.transferengine.autoconfigure.observation;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.PagedWrite;
import dev.transferengine.ReceivePool;
import dev.transferengine.Routing;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.ReactiveTransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.exceptions.RegionBoundsException;
import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.reactive.TransferObserver;

import java.lang.foreign.Arena;
import java.time.Duration;

import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.util.context.Context;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With an ObservationRegistry bean, every write, paged write, send and imm wait of the auto-configured reactive
 * engine is an observation, child of the observation in the Reactor context.
 */
class TransferEngineObservationAutoConfigurationTests {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String NAME = DefaultTransferObservationConvention.NAME;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    TransferEngineAutoConfiguration.class,
                    ReactiveTransferEngineAutoConfiguration.class,
                    TransferEngineObservationAutoConfiguration.class));

    @Test
    void writeIsAChildOfTheObservationInTheReactorContext() {
        runner.withUserConfiguration(Registry.class).run(context -> {
            final TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
            final ReactiveTransferEngine reactive = context.getBean(ReactiveTransferEngine.class);
            try (Arena arena = Arena.ofShared()) {
                final MemoryRegion src = reactive.engine().register(arena.allocate(8192, 4096), Device.host());
                final MemoryRegion dst = reactive.engine().register(arena.allocate(8192, 4096), Device.host());
                final Observation request = Observation.start("http.server.requests", registry);

                StepVerifier.create(reactive.write(SingleWrite.of(src, 0, 4096, dst.descriptor(), 0)
                                        .withRouting(Routing.pinned(0)))
                                .contextWrite(Context.of(ObservationTransferObserver.CONTEXT_KEY, request)))
                        .expectComplete()
                        .verify(WAIT);
                request.stop();

                assertThat(registry)
                        .hasObservationWithNameEqualTo(NAME)
                        .that()
                        .hasContextualNameEqualTo("transfer-engine write")
                        .hasLowCardinalityKeyValue("engine", "transferEngine")
                        .hasLowCardinalityKeyValue("kind", "write")
                        .hasLowCardinalityKeyValue("transport", "tcp")
                        .hasLowCardinalityKeyValue("routing", "pinned-0")
                        .hasLowCardinalityKeyValue("outcome", "success")
                        .hasHighCardinalityKeyValue(
                                "peer", dst.descriptor().nic(0).address().describe())
                        .hasParentObservationEqualTo(request)
                        .doesNotHaveError()
                        .hasBeenStarted()
                        .hasBeenStopped();
            }
        });
    }

    @Test
    void pagedWriteSendAndImmWaitAreObservedEachWithItsKind() {
        runner.withUserConfiguration(Registry.class).run(context -> {
            final TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
            final ReactiveTransferEngine reactive = context.getBean(ReactiveTransferEngine.class);
            final TransferEngine engine = reactive.engine();
            try (Arena arena = Arena.ofShared();
                    ReceivePool receives = engine.postedReceivePool(256, 4, message -> {})) {
                final MemoryRegion src = engine.register(arena.allocate(16384, 4096), Device.host());
                final MemoryRegion dst = engine.register(arena.allocate(16384, 4096), Device.host());

                StepVerifier.create(reactive.write(PagedWrite.of(src, dst.descriptor(), 4096, new int[] {0, 2})
                                        .withImm(7))
                                .then(reactive.expectImm(7, 2))
                                .then(reactive.send(engine.mainAddress(), new byte[] {1, 2, 3})))
                        .expectComplete()
                        .verify(WAIT);
                assertThat(receives).isNotNull();

                assertThat(registry)
                        .hasNumberOfObservationsWithNameEqualTo(NAME, 3)
                        .hasAnObservation(observation -> observation
                                .hasLowCardinalityKeyValue("kind", "paged-write")
                                .hasLowCardinalityKeyValue("routing", "per-nic-ranges")
                                .hasLowCardinalityKeyValue("outcome", "success")
                                .doesNotHaveParentObservation())
                        .hasAnObservation(observation -> observation
                                .hasLowCardinalityKeyValue("kind", "imm-wait")
                                .hasLowCardinalityKeyValue("outcome", "success")
                                .hasHighCardinalityKeyValue("peer", "none"))
                        .hasAnObservation(observation -> observation
                                .hasLowCardinalityKeyValue("kind", "send")
                                .hasLowCardinalityKeyValue("outcome", "success")
                                .hasHighCardinalityKeyValue(
                                        "peer", engine.mainAddress().describe()));
            }
        });
    }

    @Test
    void failedWriteAndTimedOutImmWaitCarryTheirOutcomeAndError() {
        runner.withUserConfiguration(Registry.class).run(context -> {
            final TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
            final ReactiveTransferEngine reactive = context.getBean(ReactiveTransferEngine.class);
            try (Arena arena = Arena.ofShared()) {
                final MemoryRegion src = reactive.engine().register(arena.allocate(8192, 4096), Device.host());
                final MemoryRegion dst = reactive.engine().register(arena.allocate(4096, 4096), Device.host());

                StepVerifier.create(reactive.write(SingleWrite.of(src, 0, 8192, dst.descriptor(), 0)))
                        .expectError(RegionBoundsException.class)
                        .verify(WAIT);
                StepVerifier.create(reactive.expectImm(99, 1, Duration.ofMillis(1)))
                        .expectError(TransferTimeoutException.class)
                        .verify(WAIT);

                assertThat(registry)
                        .hasAnObservation(observation -> observation
                                .hasLowCardinalityKeyValue("kind", "write")
                                .hasLowCardinalityKeyValue("outcome", "failure")
                                .hasError())
                        .hasAnObservation(observation -> observation
                                .hasLowCardinalityKeyValue("kind", "imm-wait")
                                .hasLowCardinalityKeyValue("outcome", "timeout")
                                .hasError());
            }
        });
    }

    @Test
    void theObservationTimerGetsAHelpText() {
        runner.withBean(ObservationRegistry.class, ObservationRegistry::create).run(context -> {
            final SimpleMeterRegistry registry = new SimpleMeterRegistry();
            context.getBeansOfType(MeterFilter.class).values().forEach(registry.config()::meterFilter);
            // as Micrometer's DefaultMeterObservationHandler registers it: no description
            registry.timer(NAME, "engine", "transferEngine");

            assertThat(registry.get(NAME).timer().getId().getDescription())
                    .startsWith("Reactive transfers of the engine's facade");
        });
    }

    @Test
    void eachSubscriptionIsAnObservationOfItsOwn() {
        runner.withUserConfiguration(Registry.class).run(context -> {
            final TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
            final ReactiveTransferEngine reactive = context.getBean(ReactiveTransferEngine.class);
            try (Arena arena = Arena.ofShared()) {
                final MemoryRegion src = reactive.engine().register(arena.allocate(4096, 4096), Device.host());
                final MemoryRegion dst = reactive.engine().register(arena.allocate(4096, 4096), Device.host());
                final Mono<Void> write = reactive.write(SingleWrite.of(src, 0, 4096, dst.descriptor(), 0));

                StepVerifier.create(write.then(write)).expectComplete().verify(WAIT);

                assertThat(registry).hasNumberOfObservationsWithNameEqualTo(NAME, 2);
            }
        });
    }

    @Test
    void withoutAnObservationRegistryNothingIsObserved() {
        runner.run(context -> {
            assertThat(context).doesNotHaveBean(TransferObserver.class);
            assertThat(context.getBean(ReactiveTransferEngine.class).observer()).isSameAs(TransferObserver.NONE);
        });
    }

    @Test
    void aConventionBeanRenamesTheObservations() {
        runner.withUserConfiguration(Registry.class, Renamed.class).run(context -> {
            final TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
            final ReactiveTransferEngine reactive = context.getBean(ReactiveTransferEngine.class);

            StepVerifier.create(reactive.expectImm(5, 1, Duration.ofMillis(1)))
                    .expectError(TransferTimeoutException.class)
                    .verify(WAIT);

            assertThat(registry)
                    .hasObservationWithNameEqualTo("kv.transfer")
                    .that()
                    .hasLowCardinalityKeyValue("kind", "imm-wait");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Registry {

        @Bean
        TestObservationRegistry observationRegistry() {
            return TestObservationRegistry.create();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Renamed {

        @Bean
        TransferObservationConvention kvConvention() {
            return new DefaultTransferObservationConvention() {
                @Override
                public String getName() {
                    return "kv.transfer";
                }
            };
        }
    }
}
