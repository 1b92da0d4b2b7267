package dev.transferengine.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.core.io.support.SpringFactoriesLoader.ArgumentResolver;
import org.springframework.core.io.support.SpringFactoriesLoader.FailureHandler;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/** A key under transfer-engine that binds to nothing fails start-up, naming the nearest valid key. */
class UnknownTransferEnginePropertyTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TransferEngineAutoConfiguration.class));

    @Test
    void typoOfATopLevelKeyFailsWithTheNearestName() {
        final FailureAnalysis analysis = firstAnalysis(runner.withPropertyValues("transfer-engine.transprot=tcp"));

        assertThat(analysis.getDescription())
                .contains("'transfer-engine.transprot'")
                .contains("did you mean transfer-engine.transport?");
        assertThat(analysis.getAction()).contains("rename transfer-engine.transprot to transfer-engine.transport");
    }

    @Test
    void typoInsideAGroupKeepsItsIndex() {
        final FailureAnalysis analysis = firstAnalysis(runner.withPropertyValues(
                "transfer-engine.groups[0].nics=1", "transfer-engine.groups[1].worker-cpus=0"));

        assertThat(analysis.getDescription()).contains("did you mean transfer-engine.groups[1].worker-cpu?");
    }

    @Test
    void typoOfANestedKeyNamesTheNestedOne() {
        final FailureAnalysis analysis =
                firstAnalysis(runner.withPropertyValues("transfer-engine.timeouts.operations=5s"));

        assertThat(analysis.getDescription()).contains("did you mean transfer-engine.timeouts.operation?");
    }

    @Test
    void keyLikeNoPropertyIsReportedWithoutAGuess() {
        final FailureAnalysis analysis =
                firstAnalysis(runner.withPropertyValues("transfer-engine.completely-unrelated-setting=1"));

        assertThat(analysis.getDescription())
                .contains("'transfer-engine.completely-unrelated-setting'")
                .doesNotContain("did you mean");
        assertThat(analysis.getAction()).contains("remove transfer-engine.completely-unrelated-setting");
    }

    @Test
    void environmentVariableWithATypoFailsAndSaysWhereItCameFrom() {
        final FailureAnalysis analysis = firstAnalysis(runner.withInitializer(context -> context.getEnvironment()
                .getPropertySources()
                .addFirst(environment(Map.of("TRANSFER_ENGINE_TRANSPROT", "tcp")))));

        assertThat(analysis.getDescription())
                .contains("TRANSFER_ENGINE_TRANSPROT")
                .contains("did you mean transfer-engine.transport?");
    }

    @Test
    void environmentVariableWithATypoInAGroupKeepsTheIndex() {
        final FailureAnalysis analysis = firstAnalysis(runner.withInitializer(context -> context.getEnvironment()
                .getPropertySources()
                .addFirst(environment(Map.of("TRANSFER_ENGINE_GROUPS_0_WORKER_CUP", "1")))));

        assertThat(analysis.getDescription())
                .contains("TRANSFER_ENGINE_GROUPS_0_WORKER_CUP")
                .contains("did you mean transfer-engine.groups[0].worker-cpu?");
        assertThat(analysis.getAction())
                .contains("rename TRANSFER_ENGINE_GROUPS_0_WORKER_CUP to"
                        + " TRANSFER_ENGINE_GROUPS_0_WORKER_CPU (transfer-engine.groups[0].worker-cpu)");
    }

    @Test
    void environmentVariableInTheFormWithoutDashesIsCheckedToo() {
        final FailureAnalysis analysis = firstAnalysis(runner.withInitializer(context -> context.getEnvironment()
                .getPropertySources()
                .addFirst(environment(Map.of("TRANSFERENGINE_BINDADRESS", "127.0.0.1")))));

        assertThat(analysis.getDescription()).contains("did you mean transfer-engine.bind-address?");
    }

    @Test
    void relaxedFormsFreeOptionsAndEnvironmentVariablesStillStart() {
        runner.withPropertyValues(
                        "transfer-engine.bindAddress=127.0.0.1",
                        "transfer-engine.worker.submitQueueCapacity=1024",
                        "transfer-engine.timeouts.DRAIN=1s",
                        "transfer-engine.options.some.transport-option=any",
                        "transfer-engine.options.anything=else",
                        "transfer-engine.groups[0].nics=2")
                .withInitializer(context -> context.getEnvironment()
                        .getPropertySources()
                        .addFirst(environment(Map.of(
                                "TRANSFER_ENGINE_BASE_PORT",
                                "0",
                                "TRANSFER_ENGINE_GROUPS_0_NICS",
                                "2",
                                "TRANSFER_ENGINE_OPTIONS_FROM_ENV",
                                "x",
                                "TRANSFER_ENGINE_RECEIVE_POOL_SIZE",
                                "8",
                                "TRANSFER_ENGINE_METRICS_LATENCY_SLO_0",
                                "1ms"))))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    final TransferEngineProperties properties = context.getBean(TransferEngineProperties.class);
                    assertThat(properties.getWorker().getSubmitQueueCapacity()).isEqualTo(1024);
                    assertThat(properties.getGroups().getFirst().getNics()).isEqualTo(2);
                    assertThat(properties.getReceive().getPoolSize()).isEqualTo(8);
                    assertThat(properties.getOptions())
                            .containsEntry("some.transport-option", "any")
                            .containsKey("anything");
                });
    }

    @Test
    void everyDocumentedKeyIsKnown() {
        assertThat(TransferEnginePropertyNames.all())
                .contains(
                        "transfer-engine.transport",
                        "transfer-engine.groups[].nics",
                        "transfer-engine.groups[].cuda-device",
                        "transfer-engine.options",
                        "transfer-engine.worker.idle-strategy",
                        "transfer-engine.metrics.latency-slo",
                        "transfer-engine.tcp.cluster-key-file",
                        "transfer-engine.exchange.path");
        assertThat(TransferEnginePropertyNames.all()).noneMatch(name -> name.contains("class"));
    }

    private static SystemEnvironmentPropertySource environment(final Map<String, Object> variables) {
        // the name marks it as the environment, so Spring Boot maps TRANSFER_ENGINE_X as it does for real variables
        return new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables);
    }

    /** The report Spring Boot prints: the first registered analyzer (in their order) that explains the failure. */
    private static FailureAnalysis firstAnalysis(final ApplicationContextRunner failing) {
        final @Nullable Throwable[] failure = new @Nullable Throwable[1];
        failing.run(context -> {
            assertThat(context).hasFailed();
            failure[0] = context.getStartupFailure();
        });
        final List<FailureAnalyzer> analyzers = SpringFactoriesLoader.forDefaultResourceLocation()
                .load(
                        FailureAnalyzer.class,
                        ArgumentResolver.of(Environment.class, new MockEnvironment()),
                        FailureHandler.handleMessage((message, error) -> {}));
        for (final FailureAnalyzer analyzer : analyzers) {
            final FailureAnalysis analysis = analyzer.analyze(Objects.requireNonNull(failure[0]));
            if (analysis != null) {
                assertThat(analyzer).isInstanceOf(UnknownTransferEnginePropertyFailureAnalyzer.class);
                return analysis;
            }
        }
        throw new AssertionError("no analyzer explained " + failure[0]);
    }
}
