package dev.transferengine.sample.discovery;

import dev.transferengine.autoconfigure.discovery.DescriptorRegistry;
import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleNode;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code sample.discovery=redis} against a real redis-server: a decode node and a prefill node announce themselves,
 * the decode node publishes its page pool, and the prefill node's {@code GET /discovery/engines} shows both; once
 * decode removes its entry it is gone from the list.
 */
class DiscoveryTest {

    private static final Path REDIS = Path.of("/usr/bin/redis-server");

    @Test
    void eachNodeSeesTheOthersEngineAndTheDecodePagePool() throws Exception {
        assumeTrue(Files.isExecutable(REDIS), "no " + REDIS + ": install Debian's redis-server (.ci/run does)");
        final Path dir = Files.createTempDirectory("sample-redis-");
        final int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        final Process redis = new ProcessBuilder(
                        REDIS.toString(),
                        "--port",
                        Integer.toString(port),
                        "--bind",
                        "127.0.0.1",
                        "--dir",
                        dir.toString(),
                        "--save",
                        "",
                        "--appendonly",
                        "no")
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile())
                .start();
        try {
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> {
                try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
                    return socket.isConnected();
                }
            });
            final String[] discovery = {
                "sample.discovery=redis", "spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port
            };
            try (SampleNode prefill = SampleNode.start(Role.PREFILL, with(discovery, "prefill-1"));
                    SampleNode decode = SampleNode.start(Role.DECODE, with(discovery, "decode-1"))) {
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> prefill.client()
                        .get()
                        .uri("/discovery/engines")
                        .exchange()
                        .expectStatus()
                        .isOk()
                        .expectBody()
                        .jsonPath("$[?(@.name == 'decode-1')].regions[0]")
                        .isEqualTo("kv-pool")
                        .jsonPath("$[?(@.name == 'prefill-1')].address")
                        .exists());

                // what decode's shutdown does first (closing a context here would also stop the other one's
                // server: both share Reactor Netty's global resources)
                decode.bean(DescriptorRegistry.class).unpublish().block(Duration.ofSeconds(30));

                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> prefill.client()
                        .get()
                        .uri("/discovery/engines")
                        .exchange()
                        .expectBody()
                        .jsonPath("$[?(@.name == 'decode-1')]")
                        .doesNotExist());
            }
        } finally {
            redis.destroyForcibly();
            redis.waitFor(30, TimeUnit.SECONDS);
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder())
                        .forEach(path -> path.toFile().delete());
            }
        }
    }

    private static String[] with(final String[] discovery, final String name) {
        final String[] all = Arrays.copyOf(discovery, discovery.length + 1);
        all[discovery.length] = "transfer-engine.discovery.name=" + name;
        return all;
    }
}
