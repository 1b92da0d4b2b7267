package dev.transferengine.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.pem.PemSslStoreBundle;
import org.springframework.boot.ssl.pem.PemSslStoreDetails;
import org.springframework.util.FileSystemUtils;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * Every command block of README.md, docs/sample-app.md and docs/spring-boot.md marked {@code <!-- doc-test: ID -->}
 * (but the own app's, {@link OwnAppCommandsIT}), run as written
 * against the jar this module built ({@link CommandSession} says what it rewrites to put several machines on one),
 * with its outcome checked: each {@code curl} answers 200 with a verified transfer or push, and each node shows its
 * TLS and key mode in the start-up line, in health (details only with the token, outside the demo) and in
 * {@code /actuator/transferengine}.
 */
class DocumentedCommandsIT {

    private static final Path MODULE = Path.of("").toAbsolutePath();
    private static final Path REPOSITORY = MODULE.resolve("..").normalize();
    private static final Path JAR = Path.of(System.getProperty("sample.jar", "target/sample-app.jar"));
    private static final Path WORK = MODULE.resolve("target/doc-commands");
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Duration REQUEST = Duration.ofMinutes(2);

    /** The blocks each page must mark: a marker that goes missing fails here instead of going untested. */
    private static final Map<String, Set<String>> EXPECTED = Map.of(
            "README.md", Set.of("demo-build-and-run", "kv-two-machines"),
            "docs/sample-app.md", Set.of("demo", "kv-two-machines", "weights-three-machines", "kv-https"),
            "docs/spring-boot.md", Set.of("sample-redis"));

    @Test
    void everyPageMarksItsCommandBlocks() {
        EXPECTED.forEach((page, ids) -> assertThat(blocks(page))
                .as(page)
                .extracting(DocumentedBlock::id)
                .containsExactlyInAnyOrderElementsOf(ids));
    }

    @TestFactory
    Stream<DynamicTest> everyMarkedBlockRunsAsWritten() {
        // a block documented on two pages with the same text runs once
        final Map<String, List<DocumentedBlock>> byText = new LinkedHashMap<>();
        for (final String page : new TreeSet<>(EXPECTED.keySet())) {
            for (final DocumentedBlock block : blocks(page)) {
                byText.computeIfAbsent(block.text(), text -> new ArrayList<>()).add(block);
            }
        }
        return byText.values().stream()
                .map(same -> DynamicTest.dynamicTest(
                        same.stream().map(b -> b.page() + " " + b.id()).toList().toString(),
                        () -> run(same.getFirst())));
    }

    /** The page's marked blocks but the {@code own-app-} walk-through, which {@link OwnAppCommandsIT} runs. */
    private static List<DocumentedBlock> blocks(final String page) {
        return DocumentedBlock.of(REPOSITORY, page).stream()
                .filter(block -> !block.id().startsWith("own-app-"))
                .toList();
    }

    private static void run(final DocumentedBlock block) throws Exception {
        assertThat(JAR).as("the jar under test (mvn package builds it)").isRegularFile();
        final Path dir = WORK.resolve(block.page().replace('/', '_') + "-" + block.id());
        FileSystemUtils.deleteRecursively(dir);
        try (CommandSession session = new CommandSession(dir, JAR)) {
            for (final String command : block.commands()) {
                session.run(command);
            }
            assertThat(session.nodes()).as("nodes the block starts").isNotEmpty();
            for (final CommandSession.Answer answer : session.answers()) {
                checkAnswer(answer);
            }
            for (final CommandSession.Node node : session.nodes()) {
                checkNode(session, node);
            }
        }
    }

    private static void checkAnswer(final CommandSession.Answer answer) {
        if (answer.status() < 0) {
            assertThat(answer.body()).as("output of '%s'", answer.command()).isNotBlank();
            return;
        }
        assertThat(answer.status())
                .as("HTTP status of '%s': %s", answer.command(), answer.body())
                .isEqualTo(200);
        final JsonNode body = JSON.readTree(answer.body());
        if (answer.command().contains("/kv/transfer")) {
            assertThat(body.path("verified").asBoolean()).as(answer.body()).isTrue();
            assertThat(body.path("bytes").asLong())
                    .isPositive()
                    .isEqualTo(body.path("decode").path("bytes").asLong());
            assertThat(body.path("decode").path("layers").size())
                    .isEqualTo(body.path("layers").size())
                    .isPositive();
            body.path("decode").path("layers").forEach(layer -> assertThat(
                            layer.path("matches").asBoolean())
                    .isTrue());
        } else if (answer.command().contains("/weights/push")) {
            assertThat(body.path("verified").asBoolean()).as(answer.body()).isTrue();
            assertThat(body.path("receipts").size())
                    .isEqualTo(body.path("nodes").size())
                    .isPositive();
            body.path("receipts")
                    .forEach(receipt ->
                            assertThat(receipt.path("verified").asBoolean()).isTrue());
        } else if (answer.command().contains("/discovery/engines")) {
            // the decode node announced itself before the prefill node (and its watch) started
            assertThat(answer.body()).as("what the prefill node's watch sees").contains("decode-1");
        } else if (answer.command().contains("/actuator/health")) {
            assertThat(body.path("status").asString()).isEqualTo("UP");
        } else {
            fail("no outcome known for '" + answer.command() + "'; add one to DocumentedCommandsIT");
        }
    }

    /** The node's TLS and key mode in its start-up line, health and endpoint; details need the token. */
    private static void checkNode(final CommandSession session, final CommandSession.Node node) throws Exception {
        final boolean tls = node.command().contains("--spring.profiles.active=tls");
        final String key =
                session.exported("TRANSFER_ENGINE_TCP_CLUSTER_KEY") != null ? "configured" : "public-loopback";
        final String tlsMode = tls ? "mutual" : "off";
        final String role = node.option("sample.role", "demo");
        final String host = node.option("server.address", "127.0.0.1");
        final String up = node.line("transfer engine 'transferEngine' up:");
        assertThat(up)
                .as("start-up line of '%s'", node.command())
                .isNotNull()
                .contains("TLS " + tlsMode + ", key " + key);

        final String port = node.option("server.port", Integer.toString(session.httpPort()));
        final String base = (tls ? "https://" : "http://") + host + ":" + port;
        final HttpClient client = client(tls ? ssl(session.dir(), host) : null);
        final JsonNode open = get(client, base + "/actuator/health", null);
        assertThat(open.path("status").asString()).isEqualTo("UP");
        if (role.equals("demo")) {
            // the demo, on loopback for one user, shows the details to everyone
            final JsonNode details = open.at("/components/transferEngine/components/transferEngine/details");
            assertThat(details.path("tls").asString()).isEqualTo(tlsMode);
            assertThat(details.path("key").asString()).isEqualTo(key);
            return;
        }
        assertThat(open.has("components"))
                .as("health details without the token: %s", open)
                .isFalse();
        final String token = session.exported("SAMPLE_SECURITY_TOKEN");
        assertThat(token).as("the block's token").isNotNull();
        final JsonNode details = get(client, base + "/actuator/health", token).at("/components/transferEngine/details");
        assertThat(details.path("tls").asString()).as(details.toString()).isEqualTo(tlsMode);
        assertThat(details.path("key").asString()).isEqualTo(key);
        final JsonNode endpoint =
                get(client, base + "/actuator/transferengine", token).at("/engines/transferEngine");
        assertThat(endpoint.path("tls").asString()).isEqualTo(tlsMode);
        assertThat(endpoint.path("key").asString()).isEqualTo(key);
        if (tls) {
            // mutual: without a certificate of the cluster CA no request gets through, token or not
            final SSLContext trustOnly = SslBundle.of(new PemSslStoreBundle(
                            null,
                            PemSslStoreDetails.forCertificate(
                                    "file:" + session.dir().resolve("tls/ca.crt"))))
                    .createSslContext();
            assertThatThrownBy(() -> get(client(trustOnly), base + "/actuator/health", token))
                    .isInstanceOf(IOException.class);
            assertThatThrownBy(() ->
                            get(client(null), "http://" + host + ":" + session.httpPort() + "/actuator/health", token))
                    .isInstanceOf(IOException.class);
        }
    }

    private static SSLContext ssl(final Path dir, final String host) {
        final Path tls = dir.resolve("tls");
        final PemSslStoreDetails identity = PemSslStoreDetails.forCertificate("file:" + tls.resolve(host + ".crt"))
                .withPrivateKey("file:" + tls.resolve(host + ".key"));
        return SslBundle.of(new PemSslStoreBundle(
                        identity, PemSslStoreDetails.forCertificate("file:" + tls.resolve("ca.crt"))))
                .createSslContext();
    }

    private static HttpClient client(final @Nullable SSLContext ssl) {
        final HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(REQUEST);
        if (ssl != null) {
            builder.sslContext(ssl);
        }
        return builder.build();
    }

    private static JsonNode get(final HttpClient client, final String url, final @Nullable String token)
            throws IOException, InterruptedException {
        final HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(url)).timeout(REQUEST);
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        final HttpResponse<String> response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException(url + " answered " + response.statusCode() + ": " + response.body());
        }
        return JSON.readTree(response.body());
    }
}
