package dev.transferengine.autoconfigure;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.Environment;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.core.io.support.SpringFactoriesLoader.ArgumentResolver;
import org.springframework.core.io.support.SpringFactoriesLoader.FailureHandler;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/** Bad configuration fails start-up, and the registered analyzers say what is wrong and how to fix it. */
class TransferEngineFailureAnalysisTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TransferEngineAutoConfiguration.class));

    @Test
    void unknownTransportIsReportedWithTheKnownOnes() {
        final FailureAnalysis analysis = analyze("transfer-engine.transport=infiniband");

        assertThat(analysis.getDescription())
                .contains("transfer-engine.transport")
                .contains("infiniband");
        assertThat(analysis.getAction()).contains("auto, tcp, fabric").doesNotContain("verbs");
    }

    @Test
    void nicCountOutsideOneToFourIsReportedForItsGroup() {
        final FailureAnalysis analysis =
                analyze("transfer-engine.groups[0].nics=1", "transfer-engine.groups[1].nics=5");

        assertThat(analysis.getDescription())
                .contains("transfer-engine.groups[1].nics")
                .contains("'5'")
                .contains("1 to 4 NICs");
        assertThat(analysis.getAction())
                .contains("transfer-engine.groups[1].nics")
                .contains("must be 1..4");
    }

    @Test
    void wildcardBindAddressIsRefusedSincePeersCannotReachIt() {
        final FailureAnalysis analysis = analyze("transfer-engine.bind-address=0.0.0.0");

        assertThat(analysis.getDescription())
                .contains("transfer-engine.bind-address")
                .contains("wildcard");
        assertThat(analysis.getAction()).contains("IP address or host name of this machine");
    }

    @Test
    void anSslBundleThatIsNotConfiguredIsReportedByName() {
        final FailureAnalysis analysis = analyze("transfer-engine.tcp.ssl.bundle=cluster-tls");

        assertThat(analysis.getDescription())
                .contains("transfer-engine.tcp.ssl.bundle")
                .contains("cluster-tls");
        assertThat(analysis.getAction()).contains("spring.ssl.bundle.jks.cluster-tls");
    }

    @Test
    void aShortClusterKeyIsReportedWithTheSpringPropertyAndHowToMakeAKey() {
        final FailureAnalysis analysis = analyze("transfer-engine.tcp.cluster-key=short");

        assertThat(analysis.getDescription())
                .contains("transfer-engine.tcp.cluster-key")
                .doesNotContain("tcp.clusterKey")
                .doesNotContain("short");
        assertThat(analysis.getAction())
                .contains("transfer-engine.tcp.cluster-key")
                .contains("openssl rand")
                .doesNotContain("tcp runs anywhere");
    }

    @Test
    void anUnreadableClusterKeyFileIsReportedWithTheSpringPropertyAndTheFile() {
        final FailureAnalysis analysis =
                analyze("transfer-engine.tcp.cluster-key-file=/nonexistent/transfer-engine/cluster.key");

        assertThat(analysis.getDescription())
                .contains("transfer-engine.tcp.cluster-key-file")
                .contains("/nonexistent/transfer-engine/cluster.key")
                .doesNotContain("tcp.clusterKeyFile");
        assertThat(analysis.getAction())
                .contains("transfer-engine.tcp.cluster-key-file")
                .doesNotContain("tcp runs anywhere");
    }

    @Test
    void anEmptyClusterKeyFileIsReportedWithTheSpringProperty() throws IOException {
        final Path empty = Files.createTempFile("cluster", ".key");
        try {
            final FailureAnalysis analysis = analyze("transfer-engine.tcp.cluster-key-file=" + empty);

            assertThat(analysis.getDescription())
                    .contains("transfer-engine.tcp.cluster-key-file")
                    .doesNotContain("tcp.clusterKeyFile");
            assertThat(analysis.getAction()).doesNotContain("tcp runs anywhere");
        } finally {
            Files.delete(empty);
        }
    }

    @Test
    void submitQueueCapacityThatIsNoPowerOfTwoIsReported() {
        final FailureAnalysis analysis = analyze("transfer-engine.worker.submit-queue-capacity=1000");

        assertThat(analysis.getDescription()).contains("transfer-engine.worker.submit-queue-capacity");
        assertThat(analysis.getAction()).contains("power of two");
    }

    @Test
    void aRuleOfTheEngineConfigIsReportedUnderThePropertyThatSetIt() {
        final FailureAnalysis inFlight = analyze("transfer-engine.worker.max-in-flight=0");
        assertThat(inFlight.getDescription())
                .contains("transfer-engine.worker.max-in-flight")
                .contains("'0'")
                .contains("must be >= 1");
        assertThat(inFlight.getAction()).contains("transfer-engine.worker.max-in-flight");

        final FailureAnalysis timeout = analyze("transfer-engine.timeouts.operation=0s");
        assertThat(timeout.getDescription())
                .contains("transfer-engine.timeouts.operation")
                .contains("must be positive");

        final FailureAnalysis drain = analyze("transfer-engine.timeouts.drain=-1s");
        assertThat(drain.getDescription()).contains("transfer-engine.timeouts.drain");

        final FailureAnalysis imms = analyze("transfer-engine.imms.max-unexpected=-1");
        assertThat(imms.getDescription())
                .contains("transfer-engine.imms.max-unexpected")
                .contains("must be >= 0");

        final FailureAnalysis ttl = analyze("transfer-engine.imms.unexpected-ttl=0s");
        assertThat(ttl.getDescription())
                .contains("transfer-engine.imms.unexpected-ttl")
                .contains("must be positive");
    }

    @Test
    void aRuleOfTheGroupSpecIsReportedUnderItsGroupsProperty() {
        final FailureAnalysis analysis =
                analyze("transfer-engine.groups[0].nics=1", "transfer-engine.groups[1].worker-cpu=-1");

        assertThat(analysis.getDescription())
                .contains("transfer-engine.groups[1].worker-cpu")
                .contains("must be >= 0");
    }

    @Test
    void portInUseIsReportedWithTheAddressAndPort() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            final FailureAnalysis analysis = analyze("transfer-engine.base-port=" + taken.getLocalPort());

            assertThat(analysis.getDescription()).contains("127.0.0.1").contains(String.valueOf(taken.getLocalPort()));
            assertThat(analysis.getAction()).contains("transfer-engine.base-port");
        }
    }

    @Test
    void forcedLibfabricThatCannotLoadIsReportedWithTheTransportsReason() {
        final FailureAnalysis analysis = analyze(
                "transfer-engine.transport=fabric", "transfer-engine.fabric.library-path=/nonexistent/libfabric.so.1");

        assertThat(analysis.getDescription()).contains("transport 'fabric' unavailable");
        assertThat(analysis.getAction()).contains("libfabric").contains("transfer-engine.transport=tcp");
    }

    /** Runs the context, then the failure analyzers registered in {@code spring.factories} (ours answer). */
    private FailureAnalysis analyze(final String... properties) {
        final @Nullable Throwable[] failure = new @Nullable Throwable[1];
        runner.withPropertyValues(properties).run(context -> {
            assertThat(context).hasFailed();
            failure[0] = context.getStartupFailure();
        });
        final MockEnvironment environment = new MockEnvironment();
        for (final String property : properties) {
            final int equals = property.indexOf('=');
            environment.setProperty(property.substring(0, equals), property.substring(equals + 1));
        }
        for (final FailureAnalyzer analyzer : SpringFactoriesLoader.forDefaultResourceLocation()
                .load(
                        FailureAnalyzer.class,
                        ArgumentResolver.of(Environment.class, environment),
                        FailureHandler.handleMessage((message, error) -> {}))) {
            if (analyzer.getClass().getPackageName().equals(getClass().getPackageName())) {
                final FailureAnalysis analysis = analyzer.analyze(Objects.requireNonNull(failure[0]));
                if (analysis != null) {
                    return analysis;
                }
            }
        }
        throw new AssertionError("no transfer-engine analyzer explained " + failure[0]);
    }
}
