package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Remote keys never leave the cluster unauthenticated: the Redis registry against a redis-server that speaks only
 * TLS and knows only an ACL user, configured with nothing but Spring Boot's {@code spring.data.redis.*} and
 * {@code spring.ssl.bundle.*} properties, and the start-up reports when the password, the trust or TLS is missing.
 */
class RedisRegistryTlsTests {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String ACL_USER = "user te-engine on >te-secret ~transfer-engine:* +@connection +get +set"
            + " +del +incr +pexpire +mget +scan +eval +evalsha";

    private static Path dir;
    private static RedisCertificates certificates;
    private static RedisCertificates stranger;
    private static RedisServer redis;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    SslAutoConfiguration.class,
                    TransferEngineAutoConfiguration.class,
                    DataRedisAutoConfiguration.class,
                    DataRedisReactiveAutoConfiguration.class,
                    RedisDescriptorRegistryAutoConfiguration.class,
                    DescriptorRegistryAutoConfiguration.class))
            .withPropertyValues("transfer-engine.discovery.type=redis", "spring.data.redis.host=localhost");

    @BeforeAll
    static void startRedis() throws IOException, GeneralSecurityException {
        dir = Files.createTempDirectory("te-redis-tls-");
        certificates = RedisCertificates.make(dir.resolve("cluster"), "cluster-ca");
        stranger = RedisCertificates.make(dir.resolve("stranger"), "stranger-ca");
        redis = RedisServer.startTls(certificates, "user default off", ACL_USER);
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void anAclUserOverTlsFromSpringDataRedisPropertiesAnnouncesAndLooksUp() {
        runner.withPropertyValues(tls(certificates, "te-secret", "app-tls")).run(context -> {
            assertThat(context).hasNotFailed();
            final DescriptorRegistry registry = context.getBean(DescriptorRegistry.class);
            final RegisteredEngine announced =
                    Objects.requireNonNull(registry.lookup("app-tls").block(WAIT));
            assertThat(announced.mainAddress())
                    .isEqualTo(context.getBean(TransferEngine.class).mainAddress());
        });
    }

    @Test
    void aWrongPasswordFailsStartUpNamingTheCredentialProperties() {
        runner.withPropertyValues(tls(certificates, "not-the-secret", "app-wrong"))
                .run(context -> {
                    final FailureAnalysis analysis = analysis(context.getStartupFailure());
                    assertThat(analysis.getDescription())
                            .contains("engine 'app-wrong' could not be announced")
                            .contains("WRONGPASS");
                    assertThat(analysis.getAction())
                            .contains("spring.data.redis.username", "spring.data.redis.password");
                });
    }

    @Test
    void aClientWithoutTlsFailsStartUpNamingTheTlsProperty() {
        runner.withPropertyValues(
                        "spring.data.redis.port=" + redis.port(),
                        "spring.data.redis.username=te-engine",
                        "spring.data.redis.password=te-secret",
                        "spring.data.redis.timeout=10s",
                        "transfer-engine.discovery.name=app-plain")
                .run(context -> {
                    final FailureAnalysis analysis = analysis(context.getStartupFailure());
                    assertThat(analysis.getDescription()).contains("engine 'app-plain' could not be announced");
                    assertThat(analysis.getAction()).contains("spring.data.redis.ssl.enabled=true");
                });
    }

    @Test
    void aServerCertificateOfAnotherAuthorityFailsStartUpNamingTheBundle() {
        runner.withPropertyValues(tls(stranger, "te-secret", "app-stranger")).run(context -> {
            final FailureAnalysis analysis = analysis(context.getStartupFailure());
            assertThat(analysis.getDescription()).contains("engine 'app-stranger' could not be announced");
            assertThat(analysis.getAction()).contains("spring.data.redis.ssl.bundle");
        });
    }

    /** Boot's properties for TLS trusting {@code ca}'s authority, as the ACL user with {@code password}. */
    private static String[] tls(final RedisCertificates ca, final String password, final String name) {
        return new String[] {
            "spring.data.redis.port=" + redis.port(),
            "spring.data.redis.username=te-engine",
            "spring.data.redis.password=" + password,
            "spring.data.redis.ssl.enabled=true",
            "spring.data.redis.ssl.bundle=redis",
            "spring.data.redis.timeout=10s",
            "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + ca.caCertificate(),
            "transfer-engine.discovery.name=" + name
        };
    }

    private static FailureAnalysis analysis(final @Nullable Throwable failure) {
        final FailureAnalysis analysis =
                new DescriptorRegistryFailureAnalyzer().analyze(Objects.requireNonNull(failure, "the context started"));
        return Objects.requireNonNull(analysis, () -> "no analysis of " + failure);
    }
}
