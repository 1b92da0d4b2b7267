package dev.transferengine.autoconfigure;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransportEvent;
import dev.transferengine.TransportTls;
import dev.transferengine.exceptions.PeerUnreachableException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundleKey;
import org.springframework.boot.ssl.SslBundleRegistry;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.ssl.jks.JksSslStoreBundle;
import org.springframework.boot.ssl.jks.JksSslStoreDetails;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** {@code transfer-engine.tcp.ssl.bundle} turns TLS on from a Spring Boot SSL bundle; a key store made by keytool. */
class TransferEngineTlsTests {

    private static final String PASSWORD = "test-store-pass";

    @TempDir
    static Path dir;

    private static Path keyStore;
    private static Path rotatedStore;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(SslAutoConfiguration.class, TransferEngineAutoConfiguration.class));

    @BeforeAll
    static void generateKeyStores() throws IOException, InterruptedException {
        keyStore = generate("node");
        rotatedStore = generate("rotated");
    }

    /** A PKCS12 store with one EC key pair, its own trust anchor, made by keytool. */
    private static Path generate(final String alias) throws IOException, InterruptedException {
        final Path store = dir.resolve(alias + ".p12");
        final Process process = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "keytool")
                                .toString(),
                        "-genkeypair",
                        "-alias",
                        alias,
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-dname",
                        "CN=" + alias,
                        "-validity",
                        "30",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        store.toString(),
                        "-storepass",
                        PASSWORD,
                        "-keypass",
                        PASSWORD)
                .redirectErrorStream(true)
                .start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS) && process.exitValue() == 0)
                .as(output)
                .isTrue();
        assertThat(Files.size(store)).isPositive();
        return store;
    }

    private ApplicationContextRunner withBundle(final String bundle) {
        final String prefix = "spring.ssl.bundle.jks.node.";
        return runner.withPropertyValues(
                prefix + "keystore.location=file:" + keyStore,
                prefix + "keystore.password=" + PASSWORD,
                prefix + "keystore.type=PKCS12",
                prefix + "truststore.location=file:" + keyStore,
                prefix + "truststore.password=" + PASSWORD,
                prefix + "truststore.type=PKCS12",
                "transfer-engine.tcp.ssl.bundle=" + bundle);
    }

    @Test
    void anUnknownBundleNameFailsStartUpNamingIt() {
        withBundle("nope").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure())
                    .rootCause()
                    .isInstanceOf(InvalidTransferEnginePropertyException.class)
                    .hasMessageContaining("transfer-engine.tcp.ssl.bundle")
                    .hasMessageContaining("no SSL bundle named 'nope'");
        });
    }

    @Test
    void aBundleWithATrustStoreIsMutualTlsAndTheKeyModeComesFromTheClusterKey() {
        withBundle("node")
                .withPropertyValues(
                        "transfer-engine.tcp.cluster-key=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=,ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoM=")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    final TransferEngineSecurity security = context.getBean(TransferEngineSecurity.class);
                    assertThat(security.tls()).isEqualTo("mutual");
                    assertThat(security.key()).isEqualTo("rotating");
                    assertThat(security.describes(context.getBean(TransferEngine.class)))
                            .isTrue();
                    assertThat(security.toString()).isEqualTo("TLS mutual, key rotating");
                });
        runner.run(context -> {
            final TransferEngineSecurity security = context.getBean(TransferEngineSecurity.class);
            assertThat(security.tls()).isEqualTo("off");
            assertThat(security.key()).isEqualTo("public-loopback");
        });
    }

    @Test
    void aBundleUpdateReachesNewConnections() {
        withBundle("node").run(context -> {
            final TransferEngine engine = context.getBean(TransferEngine.class);
            final JksSslStoreDetails store = new JksSslStoreDetails("PKCS12", null, "file:" + rotatedStore, PASSWORD);
            final SslBundle rotated = SslBundle.of(new JksSslStoreBundle(store, store), SslBundleKey.of(PASSWORD));
            // a member that knows only the rotated certificate
            final TransportTls rotatedTls = TransportTls.mutual(rotated.createSslContext());
            try (Arena arena = Arena.ofShared()) {
                final MemorySegment data = arena.allocate(4096).fill((byte) 9);
                final MemoryRegion target = engine.register(arena.allocate(4096), Device.host());
                try (TransferEngine before =
                        TransferEngine.builder().tls(rotatedTls).build()) {
                    final MemoryRegion source = before.register(data, Device.host());
                    assertThatThrownBy(() -> before.submit(SingleWrite.of(source, 0, 4096, target.descriptor(), 0))
                                    .get(30, TimeUnit.SECONDS))
                            .hasCauseInstanceOf(PeerUnreachableException.class);
                }

                // what Boot does when a reload-on-update bundle's files change
                context.getBean(SslBundleRegistry.class).updateBundle("node", rotated);

                try (TransferEngine after =
                        TransferEngine.builder().tls(rotatedTls).build()) {
                    final MemoryRegion source = after.register(data, Device.host());
                    after.submit(SingleWrite.of(source, 0, 4096, target.descriptor(), 0))
                            .get(30, TimeUnit.SECONDS);
                }
                assertThat(target.segment().get(ValueLayout.JAVA_BYTE, 4095)).isEqualTo((byte) 9);
            }
        });
    }

    @Test
    void theBundleSecuresTheEngineAgainstPeersWithoutTlsAndServesPeersWithIt() {
        withBundle("node").run(context -> {
            assertThat(context).hasNotFailed();
            final TransferEngine engine = context.getBean(TransferEngine.class);
            final SslBundle bundle = context.getBean(SslBundles.class).getBundle("node");
            final TransportTls tls = TransportTls.mutual(bundle.createSslContext());
            try (TransferEngine member = TransferEngine.builder().tls(tls).build();
                    TransferEngine plain = TransferEngine.builder().build();
                    Arena arena = Arena.ofShared()) {
                final MemorySegment data = arena.allocate(4096);
                data.fill((byte) 7);
                final MemoryRegion target = engine.register(arena.allocate(4096), Device.host());
                final MemoryRegion fromMember = member.register(data, Device.host());
                final MemoryRegion fromPlain = plain.register(data, Device.host());

                member.submit(SingleWrite.of(fromMember, 0, 4096, target.descriptor(), 0))
                        .get(30, TimeUnit.SECONDS);
                assertThat(target.segment().get(ValueLayout.JAVA_BYTE, 4095)).isEqualTo((byte) 7);

                assertThatThrownBy(() -> plain.submit(SingleWrite.of(fromPlain, 0, 4096, target.descriptor(), 0))
                                .get(30, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(PeerUnreachableException.class);
                await().atMost(Duration.ofSeconds(30)).until(() -> tlsFailures(engine.transportEvents()) == 1);
            }
        });
    }

    private static long tlsFailures(final List<TransportEvent> events) {
        return events.stream()
                .filter(event -> event.reason().equals("tls"))
                .mapToLong(TransportEvent::count)
                .sum();
    }
}
