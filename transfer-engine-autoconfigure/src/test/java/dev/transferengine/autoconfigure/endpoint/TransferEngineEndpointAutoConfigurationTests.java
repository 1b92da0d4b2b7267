package dev.transferengine.autoconfigure.endpoint;

import dev.transferengine.Device;
import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.endpoint.TransferEngineEndpoint.EngineDescriptor;

import java.lang.foreign.Arena;
import java.util.Objects;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

class TransferEngineEndpointAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    TransferEngineAutoConfiguration.class, TransferEngineEndpointAutoConfiguration.class));

    @Test
    void runWhenExposedDescribesGroupsNicsRegionsAndCounters() {
        runner.withPropertyValues(
                        "management.endpoints.web.exposure.include=transferengine", "transfer-engine.groups[0].nics=2")
                .run(context -> {
                    final TransferEngine engine = context.getBean(TransferEngine.class);
                    try (Arena arena = Arena.ofShared()) {
                        engine.register(arena.allocate(8192, 4096), Device.host());

                        final TransferEngineEndpoint endpoint = context.getBean(TransferEngineEndpoint.class);
                        final EngineDescriptor descriptor = Objects.requireNonNull(endpoint.engine("transferEngine"));

                        assertThat(endpoint.engines().engines()).containsOnlyKeys("transferEngine");
                        assertThat(endpoint.engine("noSuchEngine")).isNull();

                        assertThat(descriptor.transport()).isEqualTo("tcp");
                        assertThat(descriptor.mainAddress())
                                .isEqualTo(engine.mainAddress().describe())
                                .startsWith("tcp://127.0.0.1:");
                        assertThat(descriptor.healthy()).isTrue();
                        assertThat(descriptor.groups()).singleElement().satisfies(group -> assertThat(group.nics())
                                .hasSize(2));
                        assertThat(descriptor.regions()).singleElement().satisfies(region -> {
                            assertThat(region.length()).isEqualTo(8192);
                            assertThat(region.device()).isEqualTo("host");
                            assertThat(region.nics()).isEqualTo(2);
                        });
                        assertThat(descriptor.counters()).containsKeys("requests-submitted", "imm-events");
                    }
                });
    }

    @Test
    void runWhenNotExposedCreatesNoEndpoint() {
        runner.run(context -> assertThat(context).doesNotHaveBean(TransferEngineEndpoint.class));
    }

    @Test
    void runWithoutTheActuatorCreatesNoEndpoint() {
        runner.withPropertyValues("management.endpoints.web.exposure.include=transferengine")
                .withClassLoader(new FilteredClassLoader(Endpoint.class))
                .run(context -> assertThat(context)
                        .hasSingleBean(TransferEngine.class)
                        .doesNotHaveBean(TransferEngineEndpoint.class));
    }
}
