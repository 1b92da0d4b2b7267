package dev.transferengine;

import dev.transferengine.exceptions.InvalidConfigException;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

/**
 * Everything an engine is built from; made by {@link TransferEngine#builder()}.
 *
 * @param transport          {@code tcp}, {@code fabric} (libfabric; ConnectX through its verbs provider) or {@code auto}
 * @param groups             the DomainGroups; group 0 is the main group
 * @param bindAddress        address the NICs of socket-based transports bind to
 * @param basePort           first port (NIC k of group g gets {@code basePort + 4g + k}); 0 picks ephemeral ports
 * @param idleStrategy       how idle workers wait
 * @param operationTimeout   how long a write or send may stay in flight before it fails with a timeout
 * @param drainTimeout       how long {@code close()} waits for in-flight operations before failing them
 * @param submitQueueCapacity bounded MPSC queue from callers to each worker (a power of two)
 * @param maxInFlight        operations in flight per group before the worker stops taking new submissions
 * @param maxUnexpectedImms  distinct imm values credited while nobody expects them; beyond, a write with a new
 *                           such value is refused before it lands (transports that can ask first) or its imm dropped,
 *                           counted as {@link EngineCounter#IMMS_REFUSED}; one peer holds at most
 *                           {@code maxUnexpectedImms / (peers holding some + 1)} of them, so room stays for another
 * @param unexpectedImmTtl   how long imms nobody expects stay credited; then they are dropped, counted as
 *                           {@link EngineCounter#IMMS_EXPIRED}, and their place is free again
 * @param options            transport-specific options, e.g. {@code fabric.provider=shm}
 * @param tls                TLS for the tcp transport's connections, or null for none
 */
public record EngineConfig(
        String transport,
        List<GroupSpec> groups,
        String bindAddress,
        int basePort,
        IdleStrategyKind idleStrategy,
        Duration operationTimeout,
        Duration drainTimeout,
        int submitQueueCapacity,
        int maxInFlight,
        int maxUnexpectedImms,
        Duration unexpectedImmTtl,
        Map<String, String> options,
        @Nullable TransportTls tls) {

    /**
     * Checks every setting and copies {@code groups} and {@code options} into immutable collections.
     *
     * @throws InvalidConfigException naming the first setting out of range
     */
    public EngineConfig {
        if (groups.isEmpty()) {
            throw new InvalidConfigException("groups", groups, "must list at least one group");
        }
        if (basePort < 0 || basePort > 65535) {
            throw new InvalidConfigException("basePort", basePort, "must be 0..65535");
        }
        if (Integer.bitCount(submitQueueCapacity) != 1) {
            throw new InvalidConfigException("submitQueueCapacity", submitQueueCapacity, "must be a power of two");
        }
        if (maxInFlight < 1) {
            throw new InvalidConfigException("maxInFlight", maxInFlight, "must be >= 1");
        }
        if (maxUnexpectedImms < 0) {
            throw new InvalidConfigException("maxUnexpectedImms", maxUnexpectedImms, "must be >= 0");
        }
        if (operationTimeout.isNegative() || operationTimeout.isZero()) {
            throw new InvalidConfigException("operationTimeout", operationTimeout, "must be positive");
        }
        if (unexpectedImmTtl.isNegative() || unexpectedImmTtl.isZero()) {
            throw new InvalidConfigException("unexpectedImmTtl", unexpectedImmTtl, "must be positive");
        }
        if (drainTimeout.isNegative()) {
            throw new InvalidConfigException("drainTimeout", drainTimeout, "must be >= 0");
        }
        groups = List.copyOf(groups);
        options = Map.copyOf(options);
    }

    /**
     * Looks up one of {@link #options()}.
     *
     * @param key the option's name, e.g. {@code fabric.provider}
     * @param fallback what to return when the option is not set
     * @return the option's value, or {@code fallback}
     */
    public String option(final String key, final String fallback) {
        return options.getOrDefault(key, fallback);
    }

    /**
     * Every setting, with the values of secret options (a name ending in {@code key}, or naming a password or a
     * secret, e.g. {@code tcp.clusterKey}) replaced by {@code <redacted>}: a configuration gets logged.
     *
     * @return the settings, for people
     */
    @Override
    public String toString() {
        final Map<String, String> shown = new TreeMap<>();
        options.forEach((name, value) -> shown.put(name, isSecret(name) ? "<redacted>" : value));
        return "EngineConfig[transport=" + transport + ", groups=" + groups + ", bindAddress=" + bindAddress
                + ", basePort=" + basePort + ", idleStrategy=" + idleStrategy + ", operationTimeout="
                + operationTimeout + ", drainTimeout=" + drainTimeout + ", submitQueueCapacity=" + submitQueueCapacity
                + ", maxInFlight=" + maxInFlight + ", maxUnexpectedImms=" + maxUnexpectedImms + ", unexpectedImmTtl="
                + unexpectedImmTtl + ", options=" + shown
                + ", tls=" + (tls == null ? "none" : tls.needClientAuth() ? "mutual" : "server") + "]";
    }

    private static boolean isSecret(final String option) {
        final String name = option.toLowerCase(Locale.ROOT);
        return name.endsWith("key") || name.contains("password") || name.contains("secret");
    }
}
