package dev.transferengine.autoconfigure;

import dev.transferengine.GroupSpec;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.TransportTls;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.InvalidConfigException;
import dev.transferengine.reactive.ReactiveOptions;
import dev.transferengine.spi.DeviceMemory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.ssl.SslOptions;

/**
 * Copies {@link TransferEngineProperties} into a {@link TransferEngineBuilder}. The engine's config records are the
 * one home of the rules they check: an {@link InvalidConfigException} is mapped, through its
 * {@link InvalidConfigException#setting() setting}, to the property that set it, so a bad value fails start-up with
 * a report naming the property and how to fix it. Only what the records cannot know is checked here: the
 * transport's name, a wildcard bind address, the ports of all groups, CPUs and GPUs of this machine, the facade's
 * settings.
 */
final class TransferEnginePropertiesMapper {

    /** The transports a service can ask for. */
    static final List<String> TRANSPORTS = List.of("auto", "tcp", "fabric");
    /** Who may make the TLS records of the tcp transport ({@code tcp.tlsRecords}). */
    static final List<String> TLS_RECORDS = List.of("engine", "jsse");

    private static final String PREFIX = "transfer-engine.";
    /**
     * Whose native access counts: the engine's module, {@code dev.transferengine} on the module path, the unnamed
     * module on the class path. Asked of the JDK directly, since the engine does not export its native access code.
     */
    private static final Module ENGINE = TransferEngine.class.getModule();

    private static final String MANIFEST_ENTRY = "Enable-Native-Access: ALL-UNNAMED";

    /** {@code EngineConfig} components and the property of each, below {@code transfer-engine.}. */
    private static final Map<String, String> ENGINE_SETTINGS = Map.ofEntries(
            Map.entry("groups", "groups"),
            Map.entry("basePort", "base-port"),
            Map.entry("submitQueueCapacity", "worker.submit-queue-capacity"),
            Map.entry("maxInFlight", "worker.max-in-flight"),
            Map.entry("maxUnexpectedImms", "imms.max-unexpected"),
            Map.entry("unexpectedImmTtl", "imms.unexpected-ttl"),
            Map.entry("operationTimeout", "timeouts.operation"),
            Map.entry("drainTimeout", "timeouts.drain"),
            Map.entry("bindAddress", "bind-address"),
            Map.entry("transport", "transport"),
            Map.entry("idleStrategy", "worker.idle-strategy"));

    /** {@code GroupSpec} components and the property of each, below {@code transfer-engine.groups[i].}. */
    private static final Map<String, String> GROUP_SETTINGS =
            Map.of("nics", "nics", "workerCpu", "worker-cpu", "cudaDevice", "cuda-device");

    private final TransferEngineProperties properties;

    TransferEnginePropertiesMapper(final TransferEngineProperties properties) {
        this.properties = properties;
    }

    /**
     * Copies the engine settings into {@code builder} and builds its config once, so a rule the config records check
     * fails here, named by its property, before any customizer runs.
     *
     * @throws InvalidTransferEnginePropertyException naming the property of the first bad setting
     */
    void applyTo(final TransferEngineBuilder builder) {
        try { // the builder checks some settings as they are set, the config records the rest at config()
            builder.transport(transport())
                    .bindAddress(bindAddress())
                    .basePort(basePort())
                    .idleStrategy(properties.getWorker().getIdleStrategy())
                    .operationTimeout(properties.getTimeouts().getOperation())
                    .drainTimeout(properties.getTimeouts().getDrain())
                    .submitQueueCapacity(properties.getWorker().getSubmitQueueCapacity())
                    .maxInFlight(properties.getWorker().getMaxInFlight())
                    .maxUnexpectedImms(properties.getImms().getMaxUnexpected())
                    .unexpectedImmTtl(properties.getImms().getUnexpectedTtl());
        } catch (final InvalidConfigException e) {
            throw property(e, "");
        }
        final List<TransferEngineProperties.Group> groups = properties.getGroups();
        if (groups.isEmpty()) { // the builder would take no groups for its default of one
            throw new InvalidTransferEnginePropertyException(
                    PREFIX + "groups",
                    "[]",
                    "an engine needs at least one group",
                    "Remove transfer-engine.groups to get one group of one NIC, or list at least one group.");
        }
        for (int g = 0; g < groups.size(); g++) {
            builder.group(group(
                    g, groups.get(g), properties.getOptions().getOrDefault(DeviceMemory.OPTION, DeviceMemory.DEFAULT)));
        }
        properties.getOptions().forEach(builder::option);
        final TransferEngineProperties.Fabric fabric = properties.getFabric();
        if (fabric.getProvider() != null) {
            builder.option("fabric.provider", fabric.getProvider());
        }
        if (fabric.getLibraryPath() != null) {
            builder.option("fabric.library", fabric.getLibraryPath());
        }
        final TransferEngineProperties.Tcp tcp = properties.getTcp();
        if (tcp.getClusterKey() != null) {
            builder.option("tcp.clusterKey", tcp.getClusterKey());
        }
        final String keyFile = tcp.getClusterKeyFile();
        if (keyFile != null) {
            checkClusterKeyFile(keyFile);
            builder.option("tcp.clusterKeyFile", keyFile);
        }
        if (tcp.isInsecure()) {
            builder.option("tcp.insecure", "true");
        }
        final String records = tcp.getSsl().getRecords();
        if (records != null) {
            builder.option("tcp.tlsRecords", tlsRecords(records));
        }
        try {
            builder.config();
        } catch (final InvalidConfigException e) {
            throw property(e, "");
        }
    }

    /**
     * The property that set the config record component {@code e} names: {@code EngineConfig}'s in
     * {@link #ENGINE_SETTINGS}, a {@code GroupSpec}'s under {@code groupPrefix} (e.g. {@code groups[1].}).
     */
    static InvalidTransferEnginePropertyException property(final InvalidConfigException e, final String groupPrefix) {
        final String property = groupPrefix.isEmpty()
                ? PREFIX + ENGINE_SETTINGS.getOrDefault(e.setting(), e.setting())
                : PREFIX + groupPrefix + GROUP_SETTINGS.getOrDefault(e.setting(), e.setting());
        return new InvalidTransferEnginePropertyException(
                property, e.value(), String.valueOf(e.getMessage()), "Fix " + property + ": it " + rule(e) + ".");
    }

    /** The rule part of the message ("must be a power of two"), without the setting and the value. */
    private static String rule(final InvalidConfigException e) {
        final String message = String.valueOf(e.getMessage());
        final int start = message.startsWith(e.setting() + " ") ? e.setting().length() + 1 : 0;
        final int end = message.lastIndexOf(", was ");
        return end > start ? message.substring(start, end) : message;
    }

    /**
     * Refuses a key file that cannot be read or holds no key: configuring a file and then running without its key
     * (on loopback the engine would fall back to the public loopback key) is never what was meant. The key's own
     * rules (length, form) are the engine's; the failure analyzer names the property when it refuses one.
     */
    private static void checkClusterKeyFile(final String keyFile) {
        final String property = PREFIX + "tcp.cluster-key-file";
        final String text;
        try {
            text = Files.readString(Path.of(keyFile), StandardCharsets.UTF_8);
        } catch (final IOException | InvalidPathException e) {
            throw new InvalidTransferEnginePropertyException(
                    property,
                    keyFile,
                    "the file cannot be read (" + e.getClass().getSimpleName() + ")",
                    "Point " + property + " at a file this process can read that holds the cluster key, e.g. made"
                            + " with 'openssl rand -base64 32 > cluster.key', or set " + PREFIX
                            + "tcp.cluster-key instead.");
        }
        if (text.isBlank()) {
            throw new InvalidTransferEnginePropertyException(
                    property,
                    keyFile,
                    "the file holds no key",
                    "Write the cluster key into it (the same on every engine), e.g. 'openssl rand -base64 32 > "
                            + keyFile + "', or unset " + property + ".");
        }
    }

    /**
     * TLS from the SSL bundle {@code transfer-engine.tcp.ssl.bundle} names, or nothing when it is unset.
     *
     * @throws InvalidTransferEnginePropertyException if no bundle of that name exists
     */
    void applyTls(final TransferEngineBuilder builder, final @Nullable SslBundles bundles) {
        final String name = properties.getTcp().getSsl().getBundle();
        if (name == null || name.isBlank()) {
            return;
        }
        final String property = PREFIX + "tcp.ssl.bundle";
        final String fix = "Define the bundle under spring.ssl.bundle.jks." + name + " (or .pem." + name
                + ") with a key store, and a trust store for mutual TLS, or unset " + property + ".";
        if (bundles == null) {
            throw new InvalidTransferEnginePropertyException(property, name, "no SSL bundles are configured", fix);
        }
        final SslBundle bundle;
        try {
            bundle = bundles.getBundle(name);
        } catch (final NoSuchSslBundleException e) {
            throw new InvalidTransferEnginePropertyException(
                    property, name, "there is no SSL bundle named '" + name + "'", fix);
        }
        final SslOptions options = bundle.getOptions();
        final ReloadableSslContext context = ReloadableSslContext.of(bundle.createSslContext());
        // a bundle with reload-on-update calls this when its files change; new connections get the new context
        bundles.addBundleUpdateHandler(name, updated -> context.reload(updated.createSslContext()));
        builder.tls(new TransportTls(
                context,
                bundle.getStores().getTrustStore() != null,
                list(options.getEnabledProtocols()),
                list(options.getCiphers())));
    }

    private static List<String> list(final String @Nullable [] values) {
        return values == null ? List.of() : List.of(values);
    }

    /** The settings of the reactive facade. */
    ReactiveOptions reactiveOptions() {
        final long bufferSize = properties.getReceive().getBufferSize().toBytes();
        if (bufferSize < 1 || bufferSize > Integer.MAX_VALUE) {
            throw new InvalidTransferEnginePropertyException(
                    PREFIX + "receive.buffer-size",
                    properties.getReceive().getBufferSize(),
                    "a receive buffer must be 1 byte to 2 GiB",
                    "Set transfer-engine.receive.buffer-size to the largest message you expect, e.g. 64KB.");
        }
        return new ReactiveOptions(
                positive("timeouts.imm", properties.getTimeouts().getImm()),
                (int) bufferSize,
                atLeastOne("receive.pool-size", properties.getReceive().getPoolSize()));
    }

    private String transport() {
        final String transport = properties.getTransport().strip().toLowerCase(Locale.ROOT);
        if (!TRANSPORTS.contains(transport)) {
            throw new InvalidTransferEnginePropertyException(
                    PREFIX + "transport",
                    properties.getTransport(),
                    "not a known transport",
                    "Set transfer-engine.transport to one of " + String.join(", ", TRANSPORTS) + ".");
        }
        return transport;
    }

    /** The transport would refuse a bad value too, but naming its option tcp.tlsRecords instead of the property. */
    private static String tlsRecords(final String records) {
        final String value = records.strip().toLowerCase(Locale.ROOT);
        if (!TLS_RECORDS.contains(value)) {
            throw new InvalidTransferEnginePropertyException(
                    PREFIX + "tcp.ssl.records",
                    records,
                    "not a known maker of TLS records",
                    "Set transfer-engine.tcp.ssl.records to one of " + String.join(", ", TLS_RECORDS)
                            + ", or unset it for engine records.");
        }
        return value;
    }

    /** A wildcard bind cannot be advertised: peers would be told an address they cannot reach. */
    private String bindAddress() {
        final String address = properties.getBindAddress().strip();
        if (address.equals("0.0.0.0") || address.equals("::") || address.equals("[::]")) {
            throw new InvalidTransferEnginePropertyException(
                    PREFIX + "bind-address",
                    address,
                    "a wildcard address cannot be advertised to peers (they would be told 127.0.0.1)",
                    "Set transfer-engine.bind-address to the IP address or host name of this machine that peers reach,"
                            + " e.g. 10.0.0.5.");
        }
        return address;
    }

    /** The range of one port is {@code EngineConfig}'s rule; that every group's NICs fit above it is the tcp scheme's. */
    private int basePort() {
        final int port = properties.getBasePort();
        final int highest = port + 4 * (properties.getGroups().size() - 1) + 3;
        if (port > 0 && port <= 65535 && highest > 65535) {
            throw new InvalidTransferEnginePropertyException(
                    PREFIX + "base-port",
                    port,
                    "every NIC needs a port in 1..65535 (NIC k of group g listens on base-port + 4g + k)",
                    "Set transfer-engine.base-port to 0 for ephemeral ports, or to a port low enough for all groups.");
        }
        return port;
    }

    private static GroupSpec group(
            final int index, final TransferEngineProperties.Group group, final String deviceMemory) {
        final String prefix = "groups[" + index + "].";
        final String name = PREFIX + prefix;
        try {
            return checkedGroup(name, group, deviceMemory);
        } catch (final InvalidConfigException e) {
            throw property(e, prefix);
        }
    }

    /** The group's spec; its own rules are {@code GroupSpec}'s, this machine's CPUs and GPUs are checked here. */
    private static GroupSpec checkedGroup(
            final String name, final TransferEngineProperties.Group group, final String deviceMemory) {
        GroupSpec spec = GroupSpec.of(group.getNics());
        final Integer cpu = group.getWorkerCpu();
        if (cpu != null) {
            spec = spec.withWorkerCpu(cpu);
            if (cpu >= Runtime.getRuntime().availableProcessors()) {
                throw new InvalidTransferEnginePropertyException(
                        name + "worker-cpu",
                        cpu,
                        "this machine has CPUs 0.." + (Runtime.getRuntime().availableProcessors() - 1),
                        "Set " + name + "worker-cpu to one of this machine's CPUs, or remove it.");
            }
            requireNativeAccess(name + "worker-cpu", cpu);
        }
        final Integer cuda = group.getCudaDevice();
        if (cuda != null) {
            spec = spec.withCudaDevice(cuda);
            requireGpu(name + "cuda-device", cuda, deviceMemory);
        }
        return spec;
    }

    /**
     * A worker asked to be pinned and cannot be (pinning calls sched_setaffinity): failing start-up beats the
     * engine's fallback of a warning and an unpinned worker, since the user asked for pinning.
     */
    private static void requireNativeAccess(final String property, final int cpu) {
        if (!ENGINE.isNativeAccessEnabled()) {
            throw new InvalidTransferEnginePropertyException(
                    property,
                    cpu,
                    "pinning the worker needs native access, which is not enabled for "
                            + (ENGINE.isNamed() ? "module " + ENGINE.getName() : "the class path"),
                    nativeAccessFix(property + " to run unpinned"));
        }
    }

    /** How to grant native access, in the form the engine runs in now. */
    static String nativeAccessFix(final String orRemove) {
        // the manifest entry only grants the class path: a named module needs the flag
        return "Start the JVM with --enable-native-access=" + (ENGINE.isNamed() ? ENGINE.getName() : "ALL-UNNAMED")
                + (ENGINE.isNamed()
                        ? ""
                        : ", or for an executable jar add the manifest entry '" + MANIFEST_ENTRY
                                + "' (Maven: <manifestEntries><Enable-Native-Access>ALL-UNNAMED</Enable-Native-Access>"
                                + "</manifestEntries> in the maven-jar-plugin's archive configuration)")
                + "; or remove " + orRemove + ".";
    }

    /**
     * A group for a GPU that cannot be used fails now, with the device memory provider's reason (CUDA's: no driver,
     * no JCuda, no such device, ...), not at the first registration.
     */
    private static void requireGpu(final String property, final int ordinal, final String deviceMemory) {
        try {
            DeviceMemory.require(deviceMemory, ordinal);
        } catch (final DeviceUnavailableException e) {
            throw new InvalidTransferEnginePropertyException(
                    property,
                    ordinal,
                    "no usable GPU: " + e.getMessage(),
                    ENGINE.isNativeAccessEnabled()
                            ? "Run where the NVIDIA driver sees that GPU, with org.jcuda:jcuda and its linux-x86_64 natives on"
                                    + " the class path; or remove " + property + " for host memory only."
                            : nativeAccessFix(property + " for host memory only"));
        }
    }

    private static Duration positive(final String property, final Duration value) {
        if (value.isNegative() || value.isZero()) {
            throw new InvalidTransferEnginePropertyException(
                    PREFIX + property,
                    value,
                    "a timeout must be positive",
                    "Set transfer-engine." + property + " to a positive duration, e.g. 30s.");
        }
        return value;
    }

    private static int atLeastOne(final String property, final int value) {
        if (value < 1) {
            throw new InvalidTransferEnginePropertyException(
                    PREFIX + property,
                    value,
                    "it must be at least 1",
                    "Set transfer-engine." + property + " to a positive number.");
        }
        return value;
    }
}
