package dev.transferengine.sample;

import java.time.Duration;
import java.util.Locale;

import org.slf4j.LoggerFactory;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.output.Slf4jLogConsumer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * One sample-app container on a shared network. The engine binds to the container's network alias, which resolves
 * to the container's own address on that network: the engine's NetworkAddress carries the bind address, so it must be one
 * the other containers can reach (0.0.0.0 would not be).
 */
final class SampleContainer extends GenericContainer<SampleContainer> {

    /** The HTTP port inside the container. */
    static final int HTTP_PORT = 8080;

    /** The engine's fixed NIC port inside the container. */
    static final int ENGINE_PORT = 7400;

    /** The key every container's engine authenticates its peers with. */
    private static final String CLUSTER_KEY = "Q0/cNalV+SvO7IBB8CdxZRNTzGJht1przYeHYGucU2Q=";

    private final String alias;

    /**
     * @param role    the container's {@code sample.role}
     * @param alias   its name on {@code network}, also the host name other containers use
     * @param network the network shared with its peers
     */
    SampleContainer(final Role role, final String alias, final Network network) {
        super(SampleImage.get());
        this.alias = alias;
        withNetwork(network);
        withNetworkAliases(alias);
        withExposedPorts(HTTP_PORT);
        withEnv("SAMPLE_ROLE", role.name().toLowerCase(Locale.ROOT));
        withEnv("SERVER_PORT", String.valueOf(HTTP_PORT));
        // the app listens on loopback unless told otherwise; the peers and the mapped port come from outside
        withEnv("SERVER_ADDRESS", "0.0.0.0");
        withEnv("SAMPLE_SECURITY_TOKEN", SampleNode.TOKEN);
        withEnv("TRANSFER_ENGINE_BIND_ADDRESS", alias);
        withEnv("TRANSFER_ENGINE_BASE_PORT", String.valueOf(ENGINE_PORT));
        // a non-loopback bind needs the cluster key every node shares
        withEnv("TRANSFER_ENGINE_TCP_CLUSTER_KEY", CLUSTER_KEY);
        withEnv("SAMPLE_KV_LAYERS", "16");
        withEnv("SAMPLE_KV_PAGES_PER_LAYER", "32");
        withEnv("SAMPLE_KV_PAGE_SIZE", "16KB");
        withEnv("SAMPLE_WEIGHTS_COUNT", "8");
        withEnv("SAMPLE_WEIGHTS_SIZE", "1MB");
        // start-up speed over peak speed: the test machines have two cores for several JVMs
        withEnv("JAVA_TOOL_OPTIONS", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx512m");
        withLogConsumer(new Slf4jLogConsumer(LoggerFactory.getLogger("tc." + alias)).withPrefix(alias));
        waitingFor(Wait.forHttp("/actuator/health")
                .forPort(HTTP_PORT)
                .forStatusCode(200)
                .withStartupTimeout(Duration.ofMinutes(3)));
    }

    /**
     * Lets this node call {@code peer} under {@code name} ({@code sample.peers.<name>}).
     *
     * @param name lower-case letters and digits, as environment variables carry map keys
     */
    SampleContainer withPeer(final String name, final SampleContainer peer) {
        return withEnv("SAMPLE_PEERS_" + name.toUpperCase(Locale.ROOT), peer.internalUrl());
    }

    /** The URL other containers reach it at. */
    String internalUrl() {
        return "http://" + alias + ":" + HTTP_PORT;
    }

    /** The URL the test reaches it at, through the mapped port. */
    String baseUrl() {
        return "http://" + getHost() + ":" + getMappedPort(HTTP_PORT);
    }

    /** A client for its HTTP API, from the test through the mapped port, presenting the token. */
    WebTestClient client() {
        return WebTestClient.bindToServer()
                .baseUrl(baseUrl())
                .defaultHeaders(headers -> headers.setBearerAuth(SampleNode.TOKEN))
                .responseTimeout(Duration.ofMinutes(2))
                .build();
    }
}
