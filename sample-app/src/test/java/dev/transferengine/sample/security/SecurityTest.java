package dev.transferengine.sample.security;

import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleNode;
import dev.transferengine.sample.SampleProperties;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The HTTP API and the actuator need the deployment's token; the dashboard is open in the demo role only. One node
 * at a time: closing a node stops Reactor Netty's shared event loops, which another node in this JVM would still use.
 */
class SecurityTest {

    @Test
    void handsOutTheDescriptorOnlyToCallersWithTheToken() {
        try (SampleNode decode = SampleNode.start(Role.DECODE)) {
            decode.anonymousClient()
                    .get()
                    .uri("/kv/descriptor")
                    .exchange()
                    .expectStatus()
                    .isUnauthorized();
            decode.anonymousClient()
                    .get()
                    .uri("/kv/descriptor")
                    .headers(headers -> headers.setBearerAuth("not-the-token"))
                    .exchange()
                    .expectStatus()
                    .isUnauthorized();
            decode.client()
                    .get()
                    .uri("/kv/descriptor")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .jsonPath("$.region")
                    .isNotEmpty();
        }
    }

    @Test
    void opensNoSessionForCallersWithoutTheToken() {
        try (SampleNode decode = SampleNode.start(Role.DECODE)) {
            decode.anonymousClient()
                    .post()
                    .uri("/kv/sessions")
                    .bodyValue(Map.of("pages", 1))
                    .exchange()
                    .expectStatus()
                    .isUnauthorized();
        }
    }

    @Test
    void opensOnlyTheConfiguredActuatorEndpoints() {
        try (SampleNode decode = SampleNode.start(Role.DECODE)) {
            decode.anonymousClient()
                    .get()
                    .uri("/actuator/health")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .jsonPath("$.status")
                    .isEqualTo("UP")
                    .jsonPath("$.components")
                    .doesNotExist();
            decode.client()
                    .get()
                    .uri("/actuator/health")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .jsonPath("$.components.transferEngine.details.transport")
                    .isEqualTo("tcp");
            decode.anonymousClient()
                    .get()
                    .uri("/actuator/prometheus")
                    .exchange()
                    .expectStatus()
                    .isUnauthorized();
            decode.anonymousClient()
                    .get()
                    .uri("/actuator/transferengine")
                    .exchange()
                    .expectStatus()
                    .isUnauthorized();
            decode.client()
                    .get()
                    .uri("/actuator/prometheus")
                    .exchange()
                    .expectStatus()
                    .isOk();
        }
        try (SampleNode scraped = SampleNode.start(Role.DECODE, "sample.security.open-endpoints=health,prometheus")) {
            scraped.anonymousClient()
                    .get()
                    .uri("/actuator/prometheus")
                    .exchange()
                    .expectStatus()
                    .isOk();
            scraped.anonymousClient()
                    .get()
                    .uri("/actuator/transferengine")
                    .exchange()
                    .expectStatus()
                    .isUnauthorized();
        }
    }

    @Test
    void keepsTheDashboardClosedOutsideTheDemo() throws IOException, InterruptedException {
        try (SampleNode decode = SampleNode.start(Role.DECODE)) {
            decode.anonymousClient().get().uri("/").exchange().expectStatus().isUnauthorized();
            assertThat(status(decode, "/dashboard/events", false)).isEqualTo(401);
            assertThat(status(decode, "/dashboard/events", true)).isEqualTo(200);
        }
    }

    @Test
    void opensTheDashboardButNotTheApiInTheDemo() throws IOException, InterruptedException {
        try (SampleNode demo = SampleNode.start(Role.DEMO, "sample.demo.tokens=64")) {
            demo.anonymousClient().get().uri("/").exchange().expectStatus().isOk();
            demo.anonymousClient()
                    .get()
                    .uri("/dashboard.js")
                    .exchange()
                    .expectStatus()
                    .isOk();
            assertThat(status(demo, "/dashboard/events", false)).isEqualTo(200);
            // what the README tells a demo user to curl, without the demo's random token
            for (final String endpoint : new String[] {"/actuator/prometheus", "/actuator/transferengine"}) {
                demo.anonymousClient()
                        .get()
                        .uri(endpoint)
                        .exchange()
                        .expectStatus()
                        .isOk();
            }
            demo.anonymousClient()
                    .get()
                    .uri("/actuator/health")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody()
                    .jsonPath("$.components.transferEngine.status")
                    .isEqualTo("UP");
            demo.anonymousClient()
                    .get()
                    .uri("/kv/descriptor")
                    .exchange()
                    .expectStatus()
                    .isUnauthorized();
            demo.anonymousClient()
                    .post()
                    .uri("/kv/transfer?tokens=16&decode=decode")
                    .exchange()
                    .expectStatus()
                    .isUnauthorized();
        }
    }

    @Test
    void listensOnLoopbackOnly() throws IOException {
        final Optional<InetAddress> routable = routableAddress();
        assumeTrue(routable.isPresent(), "needs a non-loopback IPv4 address on this machine");
        try (SampleNode decode = SampleNode.start(Role.DECODE);
                Socket socket = new Socket()) {
            final int port =
                    Integer.parseInt(decode.url().substring(decode.url().lastIndexOf(':') + 1));
            assertThatThrownBy(() -> socket.connect(new InetSocketAddress(routable.get(), port)))
                    .isInstanceOf(ConnectException.class);
        }
    }

    @Test
    void requiresATokenInEveryRoleButTheDemo() {
        assertThatThrownBy(() -> ServiceToken.of(properties(Map.of("sample.role", "decode"))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("sample.security.token is required in role decode");
        assertThatThrownBy(() ->
                        ServiceToken.of(properties(Map.of("sample.role", "prefill", "sample.security.token", "short"))))
                .hasMessageContaining("at least 16 characters");
        final ServiceToken demo = ServiceToken.of(properties(Map.of("sample.role", "demo")));
        assertThat(demo.value())
                .hasSize(64)
                .isNotEqualTo(ServiceToken.of(properties(Map.of())).value());
    }

    /** The status of a GET whose body may never end (an event stream), read without reading the body. */
    private static int status(final SampleNode node, final String path, final boolean withToken)
            throws IOException, InterruptedException {
        final HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(node.url() + path));
        if (withToken) {
            request.header("Authorization", "Bearer " + SampleNode.TOKEN);
        }
        try (HttpClient client = HttpClient.newHttpClient()) {
            final HttpResponse<InputStream> response = client.send(request.build(), BodyHandlers.ofInputStream());
            response.body().close();
            return response.statusCode();
        }
    }

    private static SampleProperties properties(final Map<String, String> settings) {
        return new Binder(new MapConfigurationPropertySource(settings)).bindOrCreate("sample", SampleProperties.class);
    }

    private static Optional<InetAddress> routableAddress() throws SocketException {
        return NetworkInterface.networkInterfaces()
                .filter(nic -> {
                    try {
                        return nic.isUp() && !nic.isLoopback();
                    } catch (final SocketException e) {
                        return false;
                    }
                })
                .flatMap(NetworkInterface::inetAddresses)
                .filter(address -> address instanceof Inet4Address && !address.isLoopbackAddress())
                .findFirst();
    }
}
