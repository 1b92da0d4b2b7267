package dev.transferengine.bench;

import dev.transferengine.Device;
import dev.transferengine.GroupSpec;
import dev.transferengine.IdleStrategyKind;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.TransportTls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The engine options shared by {@code write} and {@code serve} ({@link EngineTuning} with them); a spawned peer gets
 * the same ones.
 */
public final class EngineOptions {

    @Option(names = "--transport", defaultValue = "tcp", description = "tcp (default) or fabric")
    String transport;

    @Option(names = "--nics", defaultValue = "1", description = "NICs in the group, 1..4 (default ${DEFAULT-VALUE})")
    int nics;

    @Option(names = "--provider", description = "libfabric provider for --transport fabric: shm or tcp")
    String provider;

    @Option(
            names = "--device",
            defaultValue = "host",
            description = "memory of the registered regions, both sides: host (default) or cuda:N (GPU N; fabric"
                    + " writes it with FI_HMEM, tcp stages it through pinned host memory)")
    String device;

    @Mixin
    EngineTuning tuning;

    @Option(
            names = "--tls-keystore",
            description = "PKCS12 key store that proves this engine and is its trust store"
                    + " too: turns on mutual TLS for --transport tcp (the spawned peer uses the same)")
    Path tlsKeyStore;

    @Option(names = "--tls-password", defaultValue = "changeit", description = "password of --tls-keystore")
    String tlsPassword;

    @Option(
            names = "--tls-ciphers",
            split = ",",
            description = "TLS cipher suites in order of preference, e.g. TLS_AES_256_GCM_SHA384"
                    + " (default: the engine's, TLS_AES_128_GCM_SHA256 first)")
    List<String> tlsCiphers = new ArrayList<>();

    @Option(
            names = "--worker-cpu",
            description = "CPU to pin this process's worker to (the spawned peer is not pinned)")
    Integer workerCpu;

    /** The idle strategy named by {@code --idle}. */
    IdleStrategyKind idleStrategy() {
        return tuning.idleStrategy();
    }

    /**
     * The device named by {@code --device}.
     *
     * @throws IllegalArgumentException if it is neither {@code host} nor {@code cuda:N}
     */
    Device device() {
        final String text = device.strip().toLowerCase(Locale.ROOT);
        if (text.equals("host")) {
            return Device.host();
        }
        if (text.startsWith("cuda:")) {
            try {
                final int ordinal = Integer.parseInt(text.substring("cuda:".length()));
                if (ordinal >= 0) {
                    return Device.cuda(ordinal);
                }
            } catch (final NumberFormatException e) {
                // the message below says what is accepted
            }
        }
        throw new IllegalArgumentException("--device must be host or cuda:N (N = 0, 1, ...), not '" + device + "'");
    }

    /** Builds and starts the engine these options describe. Blocks while the NICs open. */
    TransferEngine open() {
        GroupSpec group = GroupSpec.of(nics);
        if (device() instanceof Device.Cuda cuda) {
            group = group.withCudaDevice(cuda.ordinal()); // the NICs near that GPU; fabric then asks for FI_HMEM
        }
        if (workerCpu != null) {
            group = group.withWorkerCpu(workerCpu);
        }
        final TransferEngineBuilder builder = tuning.apply(
                TransferEngine.builder().transport(transport).group(group).submitQueueCapacity(8192));
        if (provider != null) {
            builder.option("fabric.provider", provider);
        }
        if (tlsKeyStore != null) {
            builder.tls(
                    new TransportTls(sslContext(tlsKeyStore, tlsPassword.toCharArray()), true, List.of(), tlsCiphers));
        }
        return builder.build();
    }

    /** Whether the connections run TLS. */
    boolean tls() {
        return tlsKeyStore != null;
    }

    private static SSLContext sslContext(final Path path, final char[] password) {
        try (InputStream in = Files.newInputStream(path)) {
            final KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(in, password);
            final KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, password);
            final TrustManagerFactory trust =
                    TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            final SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys.getKeyManagers(), trust.getTrustManagers(), null);
            return context;
        } catch (final IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("--tls-keystore " + path + ": " + e.getMessage(), e);
        }
    }

    /** The command-line form of these options for a spawned peer (without the worker CPU). */
    List<String> peerArgs() {
        final List<String> args = new ArrayList<>(
                List.of("--transport", transport, "--nics", Integer.toString(nics), "--device", device));
        args.addAll(tuning.args());
        if (provider != null) {
            args.add("--provider");
            args.add(provider);
        }
        if (tlsKeyStore != null) {
            args.addAll(List.of("--tls-keystore", tlsKeyStore.toString(), "--tls-password", tlsPassword));
            if (!tlsCiphers.isEmpty()) {
                args.addAll(List.of("--tls-ciphers", String.join(",", tlsCiphers)));
            }
        }
        return args;
    }
}
