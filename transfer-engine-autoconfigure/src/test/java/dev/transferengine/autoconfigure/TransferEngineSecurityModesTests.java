package dev.transferengine.autoconfigure;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The TLS and key modes that {@code TransferEngineTlsTests} leaves out, as the start-up line shows them: TLS without
 * a trust store ({@code server}), one key ({@code configured}), and no key on a routable address
 * ({@code insecure}).
 */
@ExtendWith(OutputCaptureExtension.class)
class TransferEngineSecurityModesTests {

    private static final String PASSWORD = "test-store-pass";
    private static final String ONE_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

    @TempDir
    static Path dir;

    private static Path keyStore;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(SslAutoConfiguration.class, TransferEngineAutoConfiguration.class));

    @BeforeAll
    static void generateKeyStore() throws IOException, InterruptedException {
        keyStore = dir.resolve("node.p12");
        final Process keytool = new ProcessBuilder(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "keytool")
                                .toString(),
                        "-genkeypair",
                        "-alias",
                        "node",
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-dname",
                        "CN=node",
                        "-validity",
                        "30",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        keyStore.toString(),
                        "-storepass",
                        PASSWORD,
                        "-keypass",
                        PASSWORD))
                .redirectErrorStream(true)
                .start();
        final String output = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(keytool.waitFor(60, TimeUnit.SECONDS) && keytool.exitValue() == 0)
                .as(output)
                .isTrue();
    }

    @Test
    void aBundleWithoutTrustStoreIsServerTlsAndOneKeyIsConfigured(final CapturedOutput output) {
        final String prefix = "spring.ssl.bundle.jks.server-only.";
        runner.withPropertyValues(
                        prefix + "keystore.location=file:" + keyStore,
                        prefix + "keystore.password=" + PASSWORD,
                        prefix + "keystore.type=PKCS12",
                        "transfer-engine.tcp.ssl.bundle=server-only",
                        "transfer-engine.tcp.cluster-key=" + ONE_KEY)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    final TransferEngineSecurity security = context.getBean(TransferEngineSecurity.class);
                    assertThat(security.tls()).isEqualTo("server");
                    assertThat(security.key()).isEqualTo("configured");
                    assertThat(output)
                            .contains("transfer engine 'transferEngine' up: transport tcp, 1 group(s), 1 NIC(s), "
                                    + "TLS server, key configured, main address tcp://127.0.0.1:");
                });
    }

    @Test
    void noKeyOnARoutableAddressIsInsecure(final CapturedOutput output) throws SocketException {
        final String address = routableAddress();
        assumeTrue(address != null, "needs an IPv4 address other than loopback on this machine");
        runner.withPropertyValues("transfer-engine.bind-address=" + address, "transfer-engine.tcp.insecure=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(TransferEngineSecurity.class).key())
                            .isEqualTo("insecure");
                    assertThat(output).contains("TLS off, key insecure, main address tcp://" + address + ":");
                });
        // the same without a key on loopback is the public loopback key, not insecure
        runner.withPropertyValues("transfer-engine.tcp.insecure=true").run(context -> assertThat(
                        context.getBean(TransferEngineSecurity.class).key())
                .isEqualTo("public-loopback"));
    }

    private static @Nullable String routableAddress() throws SocketException {
        for (final NetworkInterface nic : NetworkInterface.networkInterfaces().toList()) {
            if (!nic.isUp() || nic.isLoopback()) {
                continue;
            }
            for (final InetAddress address : nic.inetAddresses().toList()) {
                if (address instanceof Inet4Address && !address.isLoopbackAddress() && !address.isLinkLocalAddress()) {
                    return address.getHostAddress();
                }
            }
        }
        return null;
    }
}
