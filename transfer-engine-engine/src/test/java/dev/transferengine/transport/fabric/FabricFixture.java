package dev.transferengine.transport.fabric;

import dev.transferengine.EngineConfig;
import dev.transferengine.GroupSpec;
import dev.transferengine.IdleStrategyKind;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.RecordingDomainListener;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import org.assertj.core.api.Assertions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

import static org.awaitility.Awaitility.await;

/** Opens fabric domains outside an engine and drives them from the test thread, as a worker would. */
final class FabricFixture implements AutoCloseable {

    private final List<Domain> domains = new ArrayList<>();

    /**
     * Set (by the engine pom's second surefire execution) to the libfabric version this run is for, e.g. {@code 2.1}:
     * the fabric tests then load the library named by {@link #LIBRARY_ENV} instead of the system's.
     */
    static final String VERSION_PROPERTY = "te.fabric.version";
    /** The libfabric library (path) that the run of {@link #VERSION_PROPERTY} loads. */
    static final String LIBRARY_ENV = "TE_FABRIC_LIBRARY";

    /**
     * The {@code fabric.library} the tests load: the system's ({@code libfabric.so.1}) unless this run is for a
     * version of its own (see {@link #VERSION_PROPERTY}); null when that run has no library to load.
     */
    static @Nullable String library() {
        final String version = System.getProperty(VERSION_PROPERTY, "");
        if (version.isBlank()) {
            return FabricTransport.DEFAULT_LIBRARY;
        }
        final String path = System.getenv(LIBRARY_ENV);
        return path == null || path.isBlank() ? null : path;
    }

    static EngineConfig config(final String provider, final int nics, final Map<String, String> extra) {
        final Map<String, String> options = new HashMap<>(extra);
        options.putIfAbsent(FabricTransport.PROVIDER_OPTION, provider);
        final String library = library();
        if (library != null) {
            options.putIfAbsent(FabricTransport.LIBRARY_OPTION, library);
        }
        return new EngineConfig(
                "fabric",
                List.of(GroupSpec.of(nics)),
                "127.0.0.1",
                0,
                IdleStrategyKind.BACKOFF,
                Duration.ofSeconds(10),
                Duration.ofSeconds(1),
                1024,
                1024,
                1024,
                Duration.ofMinutes(1),
                options,
                null);
    }

    /** Skips the calling test unless {@code provider} can run here, naming why not. */
    static void assumeAvailable(final String provider) {
        final String version = System.getProperty(VERSION_PROPERTY, "");
        final String library = library();
        Assumptions.assumeTrue(
                library != null,
                () -> "the libfabric " + version + " run needs " + LIBRARY_ENV
                        + "=<prefix>/lib/libfabric.so.1: build it with `bash .ci/libfabric-2.1.sh` (as root; it prints the"
                        + " prefix) and export the variable, as .ci/run does");
        if (!version.isBlank()) {
            Assertions.assertThat(java.nio.file.Path.of(library))
                    .as(LIBRARY_ENV)
                    .isRegularFile();
            final FabricLibrary loaded = FabricLibrary.open(library);
            Assertions.assertThat(loaded.unavailabilityCause())
                    .as("%s=%s", LIBRARY_ENV, library)
                    .isNull();
            Assertions.assertThat(FabricLibrary.versionText(loaded.version()))
                    .as("the API version of %s=%s in the libfabric %s run", LIBRARY_ENV, library, version)
                    .isEqualTo(version);
        }
        final String cause = new FabricTransport().unavailabilityCause(config(provider, 1, Map.of()));
        Assumptions.assumeTrue(cause == null, () -> "needs libfabric provider " + provider + ": " + cause);
    }

    /**
     * A JVM of its own that runs {@code main} with {@code args} on this run's class path and libfabric version
     * ({@code TE_FABRIC_LIBRARY} is inherited), its standard error on this test's.
     */
    static ProcessBuilder childJvm(final Class<?> main, final String... args) {
        final List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-D" + VERSION_PROPERTY + "=" + System.getProperty(VERSION_PROPERTY, ""),
                "-cp",
                System.getProperty("java.class.path"),
                main.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
    }

    /** {@code fabric.library=...} for engines in other processes, or nothing for the system's library. */
    static List<String> libraryOptions() {
        final String library = library();
        return library == null || library.equals(FabricTransport.DEFAULT_LIBRARY)
                ? List.of()
                : List.of(FabricTransport.LIBRARY_OPTION + "=" + library);
    }

    /**
     * A domain whose close does not wait for its peers to confirm the sends it reported done ({@code
     * fabric.closeTimeoutMillis=0}): a test drives its domains from one thread, so a peer of this process answers
     * nothing while another domain closes, and each close would wait out the timeout.
     */
    Domain open(final String provider, final int nic, final RecordingDomainListener listener) {
        return open(config(provider, nic + 1, Map.of(FabricTransport.CLOSE_TIMEOUT_OPTION, "0")), nic, listener);
    }

    Domain open(final EngineConfig config, final int nic, final RecordingDomainListener listener) {
        final Domain domain = new FabricTransport().openDomain(new DomainContext(config, 0, nic, listener));
        domains.add(domain);
        return domain;
    }

    /** Polls every open domain until {@code condition} holds (bounded, so a lost completion fails the test). */
    void pollUntil(final BooleanSupplier condition) {
        await().atMost(Duration.ofSeconds(30))
                .pollInSameThread()
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> {
                    for (int i = 0; i < 200; i++) {
                        for (final Domain domain : domains) {
                            domain.poll();
                        }
                        if (condition.getAsBoolean()) {
                            return true;
                        }
                    }
                    return false;
                });
    }

    void pollAll() {
        for (final Domain domain : domains) {
            domain.poll();
        }
    }

    @Override
    public void close() {
        for (int i = domains.size() - 1; i >= 0; i--) {
            domains.get(i).close();
        }
        domains.clear();
    }
}
