package dev.transferengine.autoconfigure.health;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.boot.health.contributor.HealthContributors;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

class TransferEngineHealthContributorAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    TransferEngineAutoConfiguration.class, TransferEngineHealthContributorAutoConfiguration.class));

    @Test
    @SuppressWarnings("NullAway") // a missing key in the health details fails the test with an NPE, as it should
    void runReportsUpWithEveryNicOfEveryGroup() {
        runner.withPropertyValues("transfer-engine.groups[0].nics=2", "transfer-engine.groups[1].nics=1")
                .run(context -> {
                    final Health health = indicator(context).health();
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails())
                            .containsEntry("transport", "tcp")
                            .containsKey("mainAddress")
                            .containsEntry("inFlight", 0L)
                            .containsEntry("unreachablePeers", List.of());
                    @SuppressWarnings("unchecked")
                    final Map<String, Map<String, Map<String, Map<String, Object>>>> groups =
                            (Map<String, Map<String, Map<String, Map<String, Object>>>>)
                                    health.getDetails().get("groups");
                    assertThat(groups).containsOnlyKeys("0", "1");
                    assertThat(groups.get("0").get("nics")).containsOnlyKeys("0", "1");
                    assertThat(groups.get("0").get("nics").get("1"))
                            .containsEntry("status", "UP")
                            .containsKey("address");
                });
    }

    @Test
    void runReportsDownOnceTheEngineStopped() {
        runner.run(context -> {
            context.getBean(TransferEngine.class).close();

            assertThat(health(context).getStatus()).isEqualTo(Status.DOWN);
        });
    }

    @Test
    void runWithTwoEnginesReportsEachByBeanName() {
        runner.withUserConfiguration(TwoEngines.class).run(context -> {
            final CompositeHealthContributor composite =
                    context.getBean("transferEngineHealthContributor", CompositeHealthContributor.class);
            assertThat(composite.stream().map(HealthContributors.Entry::name))
                    .containsExactlyInAnyOrder("prefillEngine", "decodeEngine");
            final HealthIndicator decode =
                    (HealthIndicator) Objects.requireNonNull(composite.getContributor("decodeEngine"));
            assertThat(Objects.requireNonNull(decode.health()).getDetails())
                    .containsEntry(
                            "mainAddress",
                            context.getBean("decodeEngine", TransferEngine.class)
                                    .mainAddress()
                                    .describe());
        });
    }

    @Test
    void addressesAreReadable() {
        runner.run(context -> assertThat((String) health(context).getDetails().get("mainAddress"))
                .matches("tcp://127\\.0\\.0\\.1:\\d+"));
    }

    @Test
    void theAutoConfiguredEngineShowsItsTlsAndKeyModes() {
        runner.run(context -> assertThat(health(context).getDetails())
                .containsEntry("tls", "off")
                .containsEntry("key", "public-loopback"));
    }

    @Test
    void runWhenDisabledCreatesNoIndicator() {
        runner.withPropertyValues("management.health.transferengine.enabled=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(TransferEngineHealthIndicator.class)
                        .doesNotHaveBean(HealthContributor.class));
    }

    @Test
    void runWithoutTheHealthModuleCreatesNoIndicator() {
        runner.withClassLoader(new FilteredClassLoader(ConditionalOnEnabledHealthIndicator.class))
                .run(context -> assertThat(context)
                        .hasSingleBean(TransferEngine.class)
                        .doesNotHaveBean(TransferEngineHealthIndicator.class));
    }

    @Test
    void runWithAUserIndicatorBacksOff() {
        runner.withUserConfiguration(OwnIndicator.class).run(context -> assertThat(context)
                .doesNotHaveBean("transferEngineHealthContributor")
                .getBean(TransferEngineHealthIndicator.class)
                .isSameAs(context.getBean(OwnIndicator.class).indicator));
    }

    private static HealthIndicator indicator(final ApplicationContext context) {
        return context.getBean("transferEngineHealthContributor", HealthIndicator.class);
    }

    private static Health health(final ApplicationContext context) {
        return Objects.requireNonNull(indicator(context).health(), "the indicator reports a health");
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoEngines {

        @Bean(destroyMethod = "close")
        TransferEngine prefillEngine() {
            return TransferEngine.builder().build();
        }

        @Bean(destroyMethod = "close")
        TransferEngine decodeEngine() {
            return TransferEngine.builder().build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnIndicator {

        private @Nullable TransferEngineHealthIndicator indicator;

        @Bean
        TransferEngineHealthIndicator transferEngineHealthIndicator(final TransferEngine engine) {
            indicator = new TransferEngineHealthIndicator(engine);
            return indicator;
        }
    }
}
