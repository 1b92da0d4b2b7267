package dev.transferengine;

import dev.transferengine.core.Engines;
import dev.transferengine.exceptions.InvalidConfigException;
import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.exceptions.TransportUnavailableException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * Builds a {@link TransferEngine}; start with {@link TransferEngine#builder()}. The setters only record values: the
 * rules are checked once, by {@link EngineConfig}, in {@link #config()} and {@link #build()}. Not thread-safe; a
 * builder may build several engines.
 */
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
    private Duration unexpectedImmTtl = Duration.ofMinutes(1);
    private final Map<String, String> options = new HashMap<>();
    private @Nullable TransportTls tls;
    private LongSupplier clock = System::nanoTime;

    TransferEngineBuilder() {}

    /**
     * Chooses the transport.
     *
     * @param value {@code tcp} (default), {@code fabric} (libfabric: EFA, ConnectX through its verbs provider, tcp, shm) or
     *     {@code auto} (the best available)
     * @return this builder
     */
    public TransferEngineBuilder transport(final String value) {
        this.transport = value;
        return this;
    }

    /**
     * Adds a group of {@code nics} NICs, its worker not pinned. Without any call, the engine has one group of one NIC.
     *
     * @param nics number of NICs, 1..4
     * @return this builder
     * @throws InvalidConfigException if {@code nics} is out of range
     */
    public TransferEngineBuilder group(final int nics) {
        return group(GroupSpec.of(nics));
    }

    /**
     * Adds a group; groups are numbered in the order they are added, and group 0 is the main group.
     *
     * @param spec the group's NICs, worker CPU and GPU
     * @return this builder
     */
    public TransferEngineBuilder group(final GroupSpec spec) {
        groups.add(spec);
        return this;
    }

    /**
     * Sets the address the NICs of socket-based transports bind to and advertise.
     *
     * @param value an IP address or host name (default {@code 127.0.0.1})
     * @return this builder
     */
    public TransferEngineBuilder bindAddress(final String value) {
        this.bindAddress = value;
        return this;
    }

    /**
     * Sets the first port: NIC k of group g listens on {@code basePort + 4g + k}.
     *
     * @param value 0..65535; 0 (default) picks ephemeral ports
     * @return this builder
     */
    public TransferEngineBuilder basePort(final int value) {
        this.basePort = value;
        return this;
    }

    /**
     * Sets how idle workers wait.
     *
     * @param value the strategy (default {@link IdleStrategyKind#BACKOFF})
     * @return this builder
     */
    public TransferEngineBuilder idleStrategy(final IdleStrategyKind value) {
        this.idleStrategy = value;
        return this;
    }

    /**
     * Sets how long a write or send may stay in flight before it fails with a {@link TransferTimeoutException}; also
     * bounds the blocking calls (register, deregister, peer groups).
     *
     * @param value a positive duration (default 30 s)
     * @return this builder
     */
    public TransferEngineBuilder operationTimeout(final Duration value) {
        this.operationTimeout = value;
        return this;
    }

    /**
     * Sets how long {@code close()} waits for in-flight operations before failing them.
     *
     * @param value zero or positive (default 5 s)
     * @return this builder
     */
    public TransferEngineBuilder drainTimeout(final Duration value) {
        this.drainTimeout = value;
        return this;
    }

    /**
     * Sets the capacity of each worker's submission queue; a full queue answers with back-pressure.
     *
     * @param value a power of two (default 4096)
     * @return this builder
     */
    public TransferEngineBuilder submitQueueCapacity(final int value) {
        this.submitQueueCapacity = value;
        return this;
    }

    /**
     * Sets how many operations a group keeps in flight before its worker stops taking new submissions.
     *
     * @param value at least 1 (default 16384)
     * @return this builder
     * @throws InvalidConfigException if {@code value} is less than 1
     */
    public TransferEngineBuilder maxInFlight(final int value) {
        if (value < 1) {
            throw new InvalidConfigException("maxInFlight", value, "must be >= 1");
        }
        this.maxInFlight = value;
        return this;
    }

    /**
     * Sets how many distinct imm values are credited while nobody expects them; see {@link EngineConfig}.
     *
     * @param value at least 0 (default 65536, about 4 MiB of credits)
     * @return this builder
     */
    public TransferEngineBuilder maxUnexpectedImms(final int value) {
        this.maxUnexpectedImms = value;
        return this;
    }

    /**
     * Sets how long imms that nobody expects stay credited; see {@link EngineConfig}. They are dropped within an
     * eighth of it after it passed, each counted as {@link EngineCounter#IMMS_EXPIRED}.
     *
     * @param value a positive duration (default 1 minute)
     * @return this builder
     */
    public TransferEngineBuilder unexpectedImmTtl(final Duration value) {
        this.unexpectedImmTtl = value;
        return this;
    }

    /**
     * Sets a transport option, e.g. {@code option("fabric.provider", "shm")}; a second call for a key replaces the
     * value. Options a transport does not know are ignored by it.
     *
     * @param key the option's name
     * @param value its value, as text
     * @return this builder
     */
    public TransferEngineBuilder option(final String key, final String value) {
        options.put(key, value);
        return this;
    }

    /**
     * TLS for the tcp transport's connections (default none); every engine of the cluster must use TLS, or none.
     * Null turns it off again.
     *
     * @param value the TLS settings, or null for plain connections
     * @return this builder
     */
    public TransferEngineBuilder tls(final @Nullable TransportTls value) {
        this.tls = value;
        return this;
    }

    /**
     * The clock the engine's workers read to expire operations (default {@link System#nanoTime()}). A test passes a
     * manual clock and moves it past a deadline to time an operation out, instead of waiting for the timeout; see the
     * {@code transfer-engine-test} kit.
     *
     * @param nanoTime monotonic time in nanoseconds; called from the workers, so it must be thread-safe and not block
     * @return this builder
     */
    public TransferEngineBuilder clock(final LongSupplier nanoTime) {
        this.clock = Objects.requireNonNull(nanoTime, "clock");
        return this;
    }

    /**
     * The config this builder would build an engine from, checked; opens nothing.
     *
     * @return the config, one group of one NIC if no group was added
     * @throws InvalidConfigException naming the first setting out of range
     */
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
                unexpectedImmTtl,
                options,
                tls);
    }

    /**
     * Opens every NIC of every group and starts the workers. Blocks while the NICs open.
     *
     * @return the running engine; close it to stop the workers and release the NICs
     * @throws InvalidConfigException naming the first setting out of range
     * @throws TransportUnavailableException if the transport cannot run here, with the reason
     */
    public TransferEngine build() {
        return Engines.open(config(), TransferCounters.UPDATER, clock);
    }
}
