package dev.transferengine;

import dev.transferengine.core.Engines;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/** Builds a {@link TransferEngine}; start with {@link TransferEngine#builder()}. */
public final class TransferEngineBuilder {

    private String transport = "tcp";
    private final List<GroupSpec> groups = new ArrayList<>();
    private String bindAddress = "127.0.0.1";
    private int basePort;
    private IdleStrategyKind idleStrategy = IdleStrategyKind.BACKOFF;
    private Duration operationTimeout = Duration.ofSeconds(30);
    private Duration drainTimeout = Duration.ofSeconds(5);
    private int submitQueueCapacity = 4096;
    private int maxInFlight = 16384;
    private int maxUnexpectedImms = 65536;
    private final Map<String, String> options = new HashMap<>();
    private @Nullable TransportTls tls;

    TransferEngineBuilder() {}

    /** {@code tcp} (default), {@code fabric}, {@code verbs} or {@code auto}. */
    public TransferEngineBuilder transport(final String value) {
        this.transport = value;
        return this;
    }

    /** Adds a group of {@code nics} NICs. Without any call, the engine has one group of one NIC. */
    public TransferEngineBuilder group(final int nics) {
        return group(GroupSpec.of(nics));
    }

    public TransferEngineBuilder group(final GroupSpec spec) {
        groups.add(spec);
        return this;
    }

    public TransferEngineBuilder bindAddress(final String value) {
        this.bindAddress = value;
        return this;
    }

    public TransferEngineBuilder basePort(final int value) {
        this.basePort = value;
        return this;
    }

    public TransferEngineBuilder idleStrategy(final IdleStrategyKind value) {
        this.idleStrategy = value;
        return this;
    }

    public TransferEngineBuilder operationTimeout(final Duration value) {
        this.operationTimeout = value;
        return this;
    }

    public TransferEngineBuilder drainTimeout(final Duration value) {
        this.drainTimeout = value;
        return this;
    }

    public TransferEngineBuilder submitQueueCapacity(final int value) {
        this.submitQueueCapacity = value;
        return this;
    }

    public TransferEngineBuilder maxInFlight(final int value) {
        this.maxInFlight = value;
        return this;
    }

    /** Distinct imm values credited while nobody expects them (default 65536, about 4 MiB); see {@link EngineConfig}. */
    public TransferEngineBuilder maxUnexpectedImms(final int value) {
        this.maxUnexpectedImms = value;
        return this;
    }

    /** A transport option, e.g. {@code option("fabric.provider", "shm")}. */
    public TransferEngineBuilder option(final String key, final String value) {
        options.put(key, value);
        return this;
    }

    /**
     * TLS for the tcp transport's connections (default none); every engine of the cluster must use TLS, or none.
     * Null turns it off again.
     */
    public TransferEngineBuilder tls(final @Nullable TransportTls value) {
        this.tls = value;
        return this;
    }

    public EngineConfig config() {
        return new EngineConfig(
                transport,
                groups.isEmpty() ? List.of(GroupSpec.of(1)) : groups,
                bindAddress,
                basePort,
                idleStrategy,
                operationTimeout,
                drainTimeout,
                submitQueueCapacity,
                maxInFlight,
                maxUnexpectedImms,
                options,
                tls);
    }

    /**
     * Opens every NIC of every group and starts the workers.
     *
     * @throws TransportUnavailableException if the transport cannot run here, with the reason
     */
    public TransferEngine build() {
        return Engines.open(config(), TransferCounters.UPDATER);
    }
}
