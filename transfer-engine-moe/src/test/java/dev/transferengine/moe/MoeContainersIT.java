package dev.transferengine.moe;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.output.Slf4jLogConsumer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Testcontainers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The exchange across containers: a dispatcher and three expert ranks, each a {@link MoeRankServer} in its own
 * container on one network, their engines on tcp (and on fabric/tcp, where {@code TE_FABRIC_LIBRARY} names a libfabric
 * to copy into the image) between the containers' addresses. The test collects the
 * descriptors, hands every rank the others', runs layers and checks the dispatcher's outputs byte for byte against
 * the single-process reference.
 */
@Testcontainers(disabledWithoutDocker = true)
class MoeContainersIT {

    /** One dispatcher, three expert ranks of four experts each, top-3. */
    private static final MoeShape SHAPE = new MoeShape(8, 64, 3, 12, 3, 1);

    private static final long SEED = 2021;
    private static final int WIDTH = 4;
    private static final int LAYERS = 3;
    private static final int CONTROL_PORT = 7000;

    /** The key every rank's engine authenticates its peers with: the engines listen on routable addresses. */
    private static final String CLUSTER_KEY = "m8mUu0n1rJ6b2cW4v7S0Qh0p8k1bQ2u6a9sKd3Lw5xE=";

    private final List<GenericContainer<?>> containers = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final Network network = Network.newNetwork();

    /** A rank's container and its control connection. */
    private record Rank(GenericContainer<?> container, BufferedReader out, PrintWriter in) {
        String read() {
            try {
                final String line = out.readLine();
                if (line == null) {
                    throw new IOException("the rank closed its control connection");
                }
                return line;
            } catch (final IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @AfterEach
    void stop() throws IOException {
        for (final Socket socket : sockets) {
            socket.close();
        }
        containers.forEach(GenericContainer::stop);
        network.close();
    }

    private Rank start(final String transport, final String role, final int index) throws IOException {
        final String alias = role + index;
        final List<String> command = new ArrayList<>(List.of(
                "java",
                "--enable-native-access=ALL-UNNAMED",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Xmx256m",
                "-cp",
                MoeRankImage.classPath(),
                MoeRankServer.class.getName(),
                alias,
                Integer.toString(CONTROL_PORT),
                transport));
        command.addAll(MoeRankNode.args(role, index, SEED, SHAPE, WIDTH));
        final GenericContainer<?> container = new GenericContainer<>(MoeRankImage.get())
                .withNetwork(network)
                .withNetworkAliases(alias)
                .withEnv("TE_TCP_CLUSTER_KEY", CLUSTER_KEY)
                .withEnv("TE_FABRIC_LIBRARY", MoeRankImage.FABRIC_LIBRARY)
                .withExposedPorts(CONTROL_PORT)
                .withCommand(command.toArray(String[]::new))
                .withLogConsumer(new Slf4jLogConsumer(LoggerFactory.getLogger("tc." + alias)).withPrefix(alias))
                .waitingFor(Wait.forLogMessage("SERVING .*\\n", 1).withStartupTimeout(Duration.ofMinutes(2)));
        containers.add(container);
        // one after the other: JVMs starting together on a small machine are slower than in turn
        container.start();
        final Socket socket = new Socket(container.getHost(), container.getMappedPort(CONTROL_PORT));
        sockets.add(socket);
        // a rank that stops answering fails the read instead of hanging the test (its layer timeout is one minute)
        socket.setSoTimeout((int) Duration.ofMinutes(2).toMillis());
        return new Rank(
                container,
                new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8)),
                new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8));
    }

    /** Starts the dispatcher and the expert ranks, then connects them; returns the dispatcher first. */
    private List<Rank> cluster(final String transport) throws IOException {
        final List<Rank> ranks = new ArrayList<>();
        ranks.add(start(transport, "dispatcher", 0));
        for (int e = 0; e < SHAPE.expertRanks(); e++) {
            ranks.add(start(transport, "expert", e));
        }
        final List<String> descriptors = new ArrayList<>();
        for (final Rank rank : ranks) {
            final String ready = rank.read();
            assertThat(ready).startsWith("READY ");
            descriptors.add(ready.substring("READY ".length()));
        }
        final String peers =
                "PEERS " + descriptors.get(0) + " " + String.join(",", descriptors.subList(1, descriptors.size()));
        ranks.forEach(rank -> rank.in.println(peers));
        assertThat(ranks).allSatisfy(rank -> assertThat(rank.read()).isEqualTo("CONNECTED"));
        return ranks;
    }

    /** Runs a layer on the given ranks at once; returns their answers in order. */
    private static List<String> layer(final List<Rank> ranks, final int layer) {
        ranks.forEach(rank -> rank.in.println("LAYER " + layer));
        return ranks.stream().map(Rank::read).toList();
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "fabric/tcp"})
    void ranksInContainersMatchTheReferenceByteForByte(final String transport) throws IOException {
        if (transport.startsWith("fabric/")) {
            assumeTrue(
                    MoeRankImage.hasFabric(),
                    "the base image has no libfabric: set TE_FABRIC_LIBRARY to one (libfabric 2.1, as the CI builds"
                            + " it, needs only libc) for the test to copy in");
        }
        final List<Rank> ranks = cluster(transport);
        final MoeModel model = new MoeModel(SHAPE, SEED, WIDTH);
        final long bytes = SHAPE.tokens() * SHAPE.rowBytes();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment tokens = arena.allocate(bytes);
            MemorySegment expected = arena.allocate(bytes);
            model.fillTokens(0, 0, tokens);
            for (int layer = 0; layer < LAYERS; layer++) {
                final List<String> replies = layer(ranks, layer);
                assertThat(replies.subList(1, replies.size()))
                        .as("layer %d", layer)
                        .containsOnly("DONE " + layer);
                assertThat(replies.get(0)).startsWith("DONE " + layer + " ");
                model.reference(tokens, model.route(tokens), expected);
                final MemorySegment actual = MemorySegment.ofArray(
                        Base64.getDecoder().decode(replies.get(0).substring(("DONE " + layer + " ").length())));
                assertThat(actual.byteSize()).isEqualTo(bytes);
                assertThat(actual.mismatch(expected))
                        .as("first differing byte in layer %d", layer)
                        .isEqualTo(-1);
                final MemorySegment next = tokens;
                tokens = expected;
                expected = next;
            }
            assertThat(tokens.toArray(ValueLayout.JAVA_SHORT))
                    .as("outputs are not all zero")
                    .isNotEqualTo(new short[(int) (bytes / 2)]);
        }
    }

    @Test
    void anExpertContainerThatIsKilledFailsTheLayerNamingItsRank() throws IOException {
        final List<Rank> ranks = cluster("tcp");
        assertThat(layer(ranks, 0)).allSatisfy(reply -> assertThat(reply).startsWith("DONE 0"));

        final GenericContainer<?> killed = ranks.get(3).container(); // expert rank 2
        killed.getDockerClient().killContainerCmd(killed.getContainerId()).exec();

        assertThat(layer(ranks.subList(0, 3), 1))
                .allSatisfy(reply -> assertThat(reply).startsWith("FAILED 1 EXPERT 2 layer 1: expert rank 2 failed"));
    }
}
