package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.discovery.RegistryChange.Kind;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An engine in another process, publishing in a real Redis, killed with SIGKILL: nothing unpublishes it, its lease
 * runs out, and it vanishes from {@code lookup} and from a {@code watch}.
 */
class RedisRegistryKilledProcessTests {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final Duration LEASE = Duration.ofSeconds(2);

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeEverything() throws Exception {
        for (final AutoCloseable closeable : open.reversed()) {
            closeable.close();
        }
    }

    @Test
    void anEngineWhoseProcessIsKilledVanishesFromLookupAndWatchWhenItsLeaseRunsOut() throws Exception {
        final RedisServer redis = track(RedisServer.start());
        final String prefix = "te-kill-" + UUID.randomUUID() + ":";
        final Process peer = startPeer(redis.port(), prefix, "decode-0");
        final CompletableFuture<String> published = published(peer);
        final RedisDescriptorRegistry watcher = track(new RedisDescriptorRegistry(
                template(redis.port()),
                prefix,
                "watcher",
                engine().mainAddress(),
                Duration.ofMinutes(5),
                Duration.ofMillis(100)));

        final long generation = Long.parseLong(published.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        StepVerifier.create(watcher.watch().filter(change -> change.name().equals("decode-0")))
                .assertNext(change -> {
                    assertThat(change.kind()).isEqualTo(Kind.APPEARED);
                    assertThat(change.engine().generation()).isEqualTo(generation);
                    assertThat(change.engine().regions()).containsOnlyKeys("kv-pool");
                })
                .then(() -> {
                    // SIGKILL: no shutdown hook, no unpublish; only the lease can remove the entry
                    peer.destroyForcibly();
                    awaitExit(peer);
                })
                .assertNext(change -> {
                    assertThat(change.kind()).isEqualTo(Kind.VANISHED);
                    assertThat(change.engine().generation()).isEqualTo(generation);
                })
                .thenCancel()
                .verify(WAIT);
        assertThat(peer.exitValue()).as("killed by SIGKILL").isEqualTo(128 + 9);
        StepVerifier.create(watcher.lookup("decode-0")).expectComplete().verify(WAIT);
    }

    private Process startPeer(final int port, final String prefix, final String name) throws IOException {
        final Process process = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--enable-native-access=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        RegistryPeerProcess.class.getName(),
                        Integer.toString(port),
                        prefix,
                        name,
                        Long.toString(LEASE.toMillis()))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        open.add(() -> {
            process.destroyForcibly();
            awaitExit(process);
        });
        return process;
    }

    /** Completes with the generation the child printed, or fails with what it printed if it ended first. */
    private static CompletableFuture<String> published(final Process process) {
        final CompletableFuture<String> generation = new CompletableFuture<>();
        final Thread reader = new Thread(
                () -> {
                    final StringBuilder printed = new StringBuilder();
                    try (BufferedReader lines = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        String line;
                        while ((line = lines.readLine()) != null) {
                            if (line.startsWith(RegistryPeerProcess.PUBLISHED)) {
                                generation.complete(line.substring(RegistryPeerProcess.PUBLISHED.length()));
                            }
                            printed.append(line).append('\n');
                        }
                    } catch (final IOException e) {
                        generation.completeExceptionally(e);
                    }
                    generation.completeExceptionally(
                            new IllegalStateException("the peer process ended before it published:\n" + printed));
                },
                "registry-peer-output");
        reader.setDaemon(true);
        reader.start();
        return generation;
    }

    private static void awaitExit(final Process process) {
        try {
            assertThat(process.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("the peer process ended")
                    .isTrue();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private ReactiveStringRedisTemplate template(final int port) {
        final LettuceConnectionFactory connections =
                new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
        connections.afterPropertiesSet();
        open.add(connections::destroy);
        return new ReactiveStringRedisTemplate(connections);
    }

    private TransferEngine engine() {
        return track(TransferEngine.builder()
                .transport("tcp")
                .bindAddress("127.0.0.1")
                .build());
    }

    private <T extends AutoCloseable> T track(final T closeable) {
        open.add(closeable);
        return closeable;
    }
}
