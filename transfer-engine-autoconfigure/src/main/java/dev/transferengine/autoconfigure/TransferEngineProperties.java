package dev.transferengine.autoconfigure;

import dev.transferengine.IdleStrategyKind;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of the auto-configured transfer engine. Unknown keys under {@code transfer-engine.} fail start-up
 * (a typo would otherwise be ignored silently); {@link UnknownTransferEnginePropertyFailureAnalyzer} names the
 * nearest valid key. {@code transfer-engine.options.*} is a free map and takes any key.
 */
@ConfigurationProperties(prefix = "transfer-engine", ignoreUnknownFields = false)
public class TransferEngineProperties {

    /**
     * Transport: 'tcp' (pure Java, runs anywhere), 'fabric' (libfabric, e.g. EFA) or 'auto' (the best one available
     * here).
     */
    private String transport = "tcp";

    /**
     * The domain groups, one worker thread each; group 0 is the main group. By default one group of one NIC.
     */
    private List<Group> groups = new ArrayList<>(List.of(new Group()));

    /**
     * Address the NICs of socket-based transports bind to.
     */
    private String bindAddress = "127.0.0.1";

    /**
     * First port: NIC k of group g listens on base-port + 4g + k. 0 picks ephemeral ports.
     */
    private int basePort;

    /**
     * Extra transport options passed to the engine as they are, e.g. 'fabric.hmem: cuda'.
     */
    private Map<String, String> options = new LinkedHashMap<>();

    private final Fabric fabric = new Fabric();

    private final Tcp tcp = new Tcp();

    private final Worker worker = new Worker();

    private final Receive receive = new Receive();

    private final Imms imms = new Imms();

    private final Timeouts timeouts = new Timeouts();

    private final Exchange exchange = new Exchange();

    private final Metrics metrics = new Metrics();

    private final Discovery discovery = new Discovery();

    /** The defaults; Spring binds the {@code transfer-engine.*} properties onto it. */
    public TransferEngineProperties() {
        // the defaults are the field initializers
    }

    /**
     * The transport ({@code transfer-engine.transport}).
     *
     * @return 'tcp' (default), 'fabric' or 'auto'
     */
    public String getTransport() {
        return transport;
    }

    /**
     * Sets the transport ({@code transfer-engine.transport}).
     *
     * @param transport 'tcp' (default), 'fabric' or 'auto'
     */
    public void setTransport(final String transport) {
        this.transport = transport;
    }

    /**
     * The domain groups ({@code transfer-engine.groups}).
     *
     * @return the groups, group 0 first; by default one group of one NIC
     */
    public List<Group> getGroups() {
        return groups;
    }

    /**
     * Sets the domain groups ({@code transfer-engine.groups}).
     *
     * @param groups the groups, group 0 first; by default one group of one NIC
     */
    public void setGroups(final List<Group> groups) {
        this.groups = groups;
    }

    /**
     * The address socket-based NICs bind to ({@code transfer-engine.bind-address}).
     *
     * @return an IP address or host name (default 127.0.0.1)
     */
    public String getBindAddress() {
        return bindAddress;
    }

    /**
     * Sets the address socket-based NICs bind to ({@code transfer-engine.bind-address}).
     *
     * @param bindAddress an IP address or host name (default 127.0.0.1)
     */
    public void setBindAddress(final String bindAddress) {
        this.bindAddress = bindAddress;
    }

    /**
     * The first port ({@code transfer-engine.base-port}).
     *
     * @return 0..65535; 0 (default) picks ephemeral ports
     */
    public int getBasePort() {
        return basePort;
    }

    /**
     * Sets the first port ({@code transfer-engine.base-port}).
     *
     * @param basePort 0..65535; 0 (default) picks ephemeral ports
     */
    public void setBasePort(final int basePort) {
        this.basePort = basePort;
    }

    /**
     * The extra transport options ({@code transfer-engine.options}).
     *
     * @return the options by name, passed to the engine as they are
     */
    public Map<String, String> getOptions() {
        return options;
    }

    /**
     * Sets the extra transport options ({@code transfer-engine.options}).
     *
     * @param options the options by name, passed to the engine as they are
     */
    public void setOptions(final Map<String, String> options) {
        this.options = options;
    }

    /**
     * The libfabric settings ({@code transfer-engine.fabric}).
     *
     * @return the settings, never null
     */
    public Fabric getFabric() {
        return fabric;
    }

    /**
     * The tcp transport's peer authentication ({@code transfer-engine.tcp}).
     *
     * @return the settings, never null
     */
    public Tcp getTcp() {
        return tcp;
    }

    /**
     * How the group workers run ({@code transfer-engine.worker}).
     *
     * @return the settings, never null
     */
    public Worker getWorker() {
        return worker;
    }

    /**
     * The reactive receive settings ({@code transfer-engine.receive}).
     *
     * @return the settings, never null
     */
    public Receive getReceive() {
        return receive;
    }

    /**
     * The bounds on imms that arrive before anyone expects them ({@code transfer-engine.imms}).
     *
     * @return the settings, never null
     */
    public Imms getImms() {
        return imms;
    }

    /**
     * The default timeouts ({@code transfer-engine.timeouts}).
     *
     * @return the settings, never null
     */
    public Timeouts getTimeouts() {
        return timeouts;
    }

    /**
     * The descriptor endpoint settings ({@code transfer-engine.exchange}).
     *
     * @return the settings, never null
     */
    public Exchange getExchange() {
        return exchange;
    }

    /**
     * The meter settings ({@code transfer-engine.metrics}).
     *
     * @return the settings, never null
     */
    public Metrics getMetrics() {
        return metrics;
    }

    /** One domain group: its NICs, the CPU its worker is pinned to and the GPU it serves. */
    public static class Group {

        /**
         * Number of NICs (domains) in this group, 1 to 4; large writes are sharded over them.
         */
        private int nics = 1;

        /**
         * CPU to pin this group's worker thread to; unset leaves it to the OS scheduler.
         */
        private @Nullable Integer workerCpu;

        /**
         * Ordinal of the CUDA device whose memory this group registers; unset for host memory only.
         */
        private @Nullable Integer cudaDevice;

        /** A group of one NIC, its worker not pinned, serving no GPU. */
        public Group() {
            // the defaults are the field initializers
        }

        /**
         * The number of NICs in this group ({@code transfer-engine.groups[i].nics}).
         *
         * @return 1 to 4 (default 1)
         */
        public int getNics() {
            return nics;
        }

        /**
         * Sets the number of NICs in this group ({@code transfer-engine.groups[i].nics}).
         *
         * @param nics 1 to 4 (default 1)
         */
        public void setNics(final int nics) {
            this.nics = nics;
        }

        /**
         * The CPU this group's worker is pinned to ({@code transfer-engine.groups[i].worker-cpu}).
         *
         * @return the CPU index, or null to leave it to the OS scheduler
         */
        public @Nullable Integer getWorkerCpu() {
            return workerCpu;
        }

        /**
         * Sets the CPU this group's worker is pinned to ({@code transfer-engine.groups[i].worker-cpu}).
         *
         * @param workerCpu the CPU index, or null to leave it to the OS scheduler
         */
        public void setWorkerCpu(final @Nullable Integer workerCpu) {
            this.workerCpu = workerCpu;
        }

        /**
         * The CUDA device this group serves ({@code transfer-engine.groups[i].cuda-device}).
         *
         * @return the device ordinal, or null for host memory only
         */
        public @Nullable Integer getCudaDevice() {
            return cudaDevice;
        }

        /**
         * Sets the CUDA device this group serves ({@code transfer-engine.groups[i].cuda-device}).
         *
         * @param cudaDevice the device ordinal, or null for host memory only
         */
        public void setCudaDevice(final @Nullable Integer cudaDevice) {
            this.cudaDevice = cudaDevice;
        }
    }

    /** libfabric settings, used by the 'fabric' transport. */
    public static class Fabric {

        /**
         * libfabric provider, e.g. 'efa' in production, 'tcp' or 'shm' for tests; unset lets the transport choose.
         */
        private @Nullable String provider;

        /**
         * Path of the libfabric shared library; unset searches the system library path.
         */
        private @Nullable String libraryPath;

        /** No provider or library path: the transport chooses. */
        public Fabric() {
            // the defaults are the field initializers
        }

        /**
         * The libfabric provider ({@code transfer-engine.fabric.provider}).
         *
         * @return e.g. 'efa', 'tcp' or 'shm'; null lets the transport choose
         */
        public @Nullable String getProvider() {
            return provider;
        }

        /**
         * Sets the libfabric provider ({@code transfer-engine.fabric.provider}).
         *
         * @param provider e.g. 'efa', 'tcp' or 'shm'; null lets the transport choose
         */
        public void setProvider(final @Nullable String provider) {
            this.provider = provider;
        }

        /**
         * The path of the libfabric shared library ({@code transfer-engine.fabric.library-path}).
         *
         * @return the path, or null to search the system library path
         */
        public @Nullable String getLibraryPath() {
            return libraryPath;
        }

        /**
         * Sets the path of the libfabric shared library ({@code transfer-engine.fabric.library-path}).
         *
         * @param libraryPath the path, or null to search the system library path
         */
        public void setLibraryPath(final @Nullable String libraryPath) {
            this.libraryPath = libraryPath;
        }
    }

    /** Peer authentication of the 'tcp' transport (see docs/security.md). */
    public static class Tcp {

        /**
         * Cluster key every engine of the cluster shares (at least 32 random bytes in base64 or hex, e.g. from
         * 'openssl rand -base64 32'); 'new,old' accepts two during rotation.
         * Required to bind a non-loopback address unless 'insecure' is set.
         */
        private @Nullable String clusterKey;

        /**
         * File holding the cluster key (one key a line, at most two); instead of 'cluster-key'.
         */
        private @Nullable String clusterKeyFile;

        /**
         * Listen on a non-loopback address without a cluster key: anyone who reaches the port can write.
         */
        private boolean insecure;

        private final Ssl ssl = new Ssl();

        /** No cluster key, not insecure, no TLS. */
        public Tcp() {
            // the defaults are the field initializers
        }

        /**
         * The cluster key ({@code transfer-engine.tcp.cluster-key}).
         *
         * @return the key, or 'new,old' during rotation; null for none
         */
        public @Nullable String getClusterKey() {
            return clusterKey;
        }

        /**
         * Sets the cluster key ({@code transfer-engine.tcp.cluster-key}).
         *
         * @param clusterKey the key, or 'new,old' during rotation; null for none
         */
        public void setClusterKey(final @Nullable String clusterKey) {
            this.clusterKey = clusterKey;
        }

        /**
         * The file holding the cluster key ({@code transfer-engine.tcp.cluster-key-file}).
         *
         * @return the file's path, or null for none
         */
        public @Nullable String getClusterKeyFile() {
            return clusterKeyFile;
        }

        /**
         * Sets the file holding the cluster key ({@code transfer-engine.tcp.cluster-key-file}).
         *
         * @param clusterKeyFile the file's path, or null for none
         */
        public void setClusterKeyFile(final @Nullable String clusterKeyFile) {
            this.clusterKeyFile = clusterKeyFile;
        }

        /**
         * Whether a non-loopback address may be bound without a cluster key ({@code transfer-engine.tcp.insecure}).
         *
         * @return true to let anyone who reaches the port write (default false)
         */
        public boolean isInsecure() {
            return insecure;
        }

        /**
         * Sets whether a non-loopback address may be bound without a cluster key
         * ({@code transfer-engine.tcp.insecure}).
         *
         * @param insecure true to let anyone who reaches the port write (default false)
         */
        public void setInsecure(final boolean insecure) {
            this.insecure = insecure;
        }

        /**
         * The TLS settings ({@code transfer-engine.tcp.ssl}).
         *
         * @return the settings, never null
         */
        public Ssl getSsl() {
            return ssl;
        }
    }

    /** TLS of the 'tcp' transport's connections, from a Spring Boot SSL bundle (see docs/security.md). */
    public static class Ssl {

        /**
         * Name of the SSL bundle ('spring.ssl.bundle.jks.<name>' or '.pem.<name>') whose key proves this engine and
         * whose trust store decides which peers are accepted; a trust store makes client certificates required.
         * Every engine of the cluster must use TLS, or none.
         */
        private @Nullable String bundle;

        /**
         * Who makes the TLS records once a connection is authenticated: 'engine' (the transport's default: records of
         * the engine's own, keyed from the TLS session, where both ends offer them and TLS 1.3 was negotiated) or
         * 'jsse' (JSSE's records for the whole connection, as either end may ask). Unset keeps the transport's
         * default, or what transfer-engine.options sets for tcp.tlsRecords.
         */
        private @Nullable String records;

        /** No bundle: plain connections. */
        public Ssl() {
            // the defaults are the field initializers
        }

        /**
         * The name of the SSL bundle for TLS ({@code transfer-engine.tcp.ssl.bundle}).
         *
         * @return the bundle's name, or null for plain connections
         */
        public @Nullable String getBundle() {
            return bundle;
        }

        /**
         * Sets the name of the SSL bundle for TLS ({@code transfer-engine.tcp.ssl.bundle}).
         *
         * @param bundle the bundle's name, or null for plain connections
         */
        public void setBundle(final @Nullable String bundle) {
            this.bundle = bundle;
        }

        /**
         * Who makes the TLS records after the handshake ({@code transfer-engine.tcp.ssl.records}).
         *
         * @return 'engine' or 'jsse'; null for the transport's default (engine records)
         */
        public @Nullable String getRecords() {
            return records;
        }

        /**
         * Sets who makes the TLS records after the handshake ({@code transfer-engine.tcp.ssl.records}).
         *
         * @param records 'engine' or 'jsse'; null for the transport's default (engine records)
         */
        public void setRecords(final @Nullable String records) {
            this.records = records;
        }
    }

    /** How the group workers run. */
    public static class Worker {

        /**
         * How an idle worker waits: 'backoff' (spin, yield, then park; friendly to shared cores), 'spin' (lowest
         * latency, burns a pinned core) or 'yield'.
         */
        private IdleStrategyKind idleStrategy = IdleStrategyKind.BACKOFF;

        /**
         * Capacity of the bounded queue from callers to each worker; a power of two. A full queue fails submissions
         * with a back-pressure error.
         */
        private int submitQueueCapacity = 4096;

        /**
         * Operations in flight per group before the worker stops taking new submissions.
         */
        private int maxInFlight = 16384;

        /** Back-off idling, a queue of 4096, 16384 operations in flight. */
        public Worker() {
            // the defaults are the field initializers
        }

        /**
         * How an idle worker waits ({@code transfer-engine.worker.idle-strategy}).
         *
         * @return the strategy (default backoff)
         */
        public IdleStrategyKind getIdleStrategy() {
            return idleStrategy;
        }

        /**
         * Sets how an idle worker waits ({@code transfer-engine.worker.idle-strategy}).
         *
         * @param idleStrategy the strategy (default backoff)
         */
        public void setIdleStrategy(final IdleStrategyKind idleStrategy) {
            this.idleStrategy = idleStrategy;
        }

        /**
         * The capacity of each worker's submission queue ({@code transfer-engine.worker.submit-queue-capacity}).
         *
         * @return a power of two (default 4096)
         */
        public int getSubmitQueueCapacity() {
            return submitQueueCapacity;
        }

        /**
         * Sets the capacity of each worker's submission queue ({@code transfer-engine.worker.submit-queue-capacity}).
         *
         * @param submitQueueCapacity a power of two (default 4096)
         */
        public void setSubmitQueueCapacity(final int submitQueueCapacity) {
            this.submitQueueCapacity = submitQueueCapacity;
        }

        /**
         * How many operations a group keeps in flight ({@code transfer-engine.worker.max-in-flight}).
         *
         * @return at least 1 (default 16384)
         */
        public int getMaxInFlight() {
            return maxInFlight;
        }

        /**
         * Sets how many operations a group keeps in flight ({@code transfer-engine.worker.max-in-flight}).
         *
         * @param maxInFlight at least 1 (default 16384)
         */
        public void setMaxInFlight(final int maxInFlight) {
            this.maxInFlight = maxInFlight;
        }
    }

    /** Two-sided receives through the reactive API. */
    public static class Receive {

        /**
         * Receive buffers each subscription to ReactiveTransferEngine.receive() keeps posted: the most messages the
         * engine holds for it at once.
         */
        private int poolSize = 64;

        /**
         * Size of each receive buffer; longer messages cannot be received. On the libfabric providers tcp and verbs
         * (RxM) a send carries at most RxM's eager limit, 16KB unless FI_OFI_RXM_BUFFER_SIZE (libfabric 2.x) or
         * FI_OFI_RXM_EAGER_LIMIT (1.x) raises it: a longer send fails at the sender with InvalidRequestException,
         * whatever this size.
         */
        private DataSize bufferSize = DataSize.ofKilobytes(64);

        /** 64 buffers of 64 KB per subscription. */
        public Receive() {
            // the defaults are the field initializers
        }

        /**
         * The receive buffers each receive subscription keeps posted ({@code transfer-engine.receive.pool-size}).
         *
         * @return at least 1 (default 64)
         */
        public int getPoolSize() {
            return poolSize;
        }

        /**
         * Sets the receive buffers each receive subscription keeps posted ({@code transfer-engine.receive.pool-size}).
         *
         * @param poolSize at least 1 (default 64)
         */
        public void setPoolSize(final int poolSize) {
            this.poolSize = poolSize;
        }

        /**
         * The size of each receive buffer ({@code transfer-engine.receive.buffer-size}).
         *
         * @return the size (default 64KB): the longest message that can be received
         */
        public DataSize getBufferSize() {
            return bufferSize;
        }

        /**
         * Sets the size of each receive buffer ({@code transfer-engine.receive.buffer-size}).
         *
         * @param bufferSize the size (default 64KB): the longest message that can be received
         */
        public void setBufferSize(final DataSize bufferSize) {
            this.bufferSize = bufferSize;
        }
    }

    /** Imms that arrive before anyone expects them: how many are credited, and for how long. */
    public static class Imms {

        /**
         * Distinct imm values credited while nobody expects them; a write with a further new value is refused. One
         * peer holds at most max-unexpected / (peers holding some + 1), so one member cannot starve the others.
         */
        private int maxUnexpected = 65536;

        /**
         * How long an imm nobody expects stays credited before it is dropped (counted as kind=imm-expired).
         */
        private Duration unexpectedTtl = Duration.ofMinutes(1);

        /** 65,536 values, credited for a minute. */
        public Imms() {
            // the defaults are the field initializers
        }

        /**
         * The distinct imm values credited while nobody expects them ({@code transfer-engine.imms.max-unexpected}).
         *
         * @return at least 0 (default 65536)
         */
        public int getMaxUnexpected() {
            return maxUnexpected;
        }

        /**
         * Sets the distinct imm values credited while nobody expects them
         * ({@code transfer-engine.imms.max-unexpected}).
         *
         * @param maxUnexpected at least 0 (default 65536)
         */
        public void setMaxUnexpected(final int maxUnexpected) {
            this.maxUnexpected = maxUnexpected;
        }

        /**
         * How long an imm nobody expects stays credited ({@code transfer-engine.imms.unexpected-ttl}).
         *
         * @return positive (default 1m)
         */
        public Duration getUnexpectedTtl() {
            return unexpectedTtl;
        }

        /**
         * Sets how long an imm nobody expects stays credited ({@code transfer-engine.imms.unexpected-ttl}).
         *
         * @param unexpectedTtl positive (default 1m)
         */
        public void setUnexpectedTtl(final Duration unexpectedTtl) {
            this.unexpectedTtl = unexpectedTtl;
        }
    }

    /** Default timeouts. */
    public static class Timeouts {

        /**
         * How long a write or send may stay in flight before it fails with a timeout.
         */
        private Duration operation = Duration.ofSeconds(30);

        /**
         * How long ReactiveTransferEngine.expectImm waits for its imm events by default.
         */
        private Duration imm = Duration.ofSeconds(30);

        /**
         * How long shutdown waits for in-flight operations to drain before failing them and closing the NICs.
         */
        private Duration drain = Duration.ofSeconds(5);

        /** 30 s operations and imm waits, 5 s drain. */
        public Timeouts() {
            // the defaults are the field initializers
        }

        /**
         * How long a write or send may stay in flight ({@code transfer-engine.timeouts.operation}).
         *
         * @return a positive duration (default 30s)
         */
        public Duration getOperation() {
            return operation;
        }

        /**
         * Sets how long a write or send may stay in flight ({@code transfer-engine.timeouts.operation}).
         *
         * @param operation a positive duration (default 30s)
         */
        public void setOperation(final Duration operation) {
            this.operation = operation;
        }

        /**
         * How long expectImm waits by default ({@code transfer-engine.timeouts.imm}).
         *
         * @return a positive duration (default 30s)
         */
        public Duration getImm() {
            return imm;
        }

        /**
         * Sets how long expectImm waits by default ({@code transfer-engine.timeouts.imm}).
         *
         * @param imm a positive duration (default 30s)
         */
        public void setImm(final Duration imm) {
            this.imm = imm;
        }

        /**
         * How long shutdown waits for in-flight operations ({@code transfer-engine.timeouts.drain}).
         *
         * @return zero or positive (default 5s)
         */
        public Duration getDrain() {
            return drain;
        }

        /**
         * Sets how long shutdown waits for in-flight operations ({@code transfer-engine.timeouts.drain}).
         *
         * @param drain zero or positive (default 5s)
         */
        public void setDrain(final Duration drain) {
            this.drain = drain;
        }
    }

    /** The descriptor endpoint through which peers fetch the regions this service publishes. */
    public static class Exchange {

        /**
         * Whether a WebFlux application serves its published regions' descriptors (remote keys included) at the
         * path below; only on a network where every client may write into those regions.
         */
        private boolean enabled;

        /**
         * Path of the descriptor endpoint; GET it for everything published, GET path/name for one region.
         */
        private String path = "/transfer-engine/descriptors";

        /** Disabled, at {@code /transfer-engine/descriptors}. */
        public Exchange() {
            // the defaults are the field initializers
        }

        /**
         * Whether the descriptor endpoint is served ({@code transfer-engine.exchange.enabled}).
         *
         * @return true to serve it (default false)
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets whether the descriptor endpoint is served ({@code transfer-engine.exchange.enabled}).
         *
         * @param enabled true to serve it (default false)
         */
        public void setEnabled(final boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * The path of the descriptor endpoint ({@code transfer-engine.exchange.path}).
         *
         * @return the path (default /transfer-engine/descriptors)
         */
        public String getPath() {
            return path;
        }

        /**
         * Sets the path of the descriptor endpoint ({@code transfer-engine.exchange.path}).
         *
         * @param path the path (default /transfer-engine/descriptors)
         */
        public void setPath(final String path) {
            this.path = path;
        }
    }

    /**
     * Discovery settings ({@code transfer-engine.discovery.*}).
     *
     * @return the discovery settings
     */
    public Discovery getDiscovery() {
        return discovery;
    }

    /**
     * Where engines publish their address and named regions for their peers, and find each other's: a descriptor
     * registry.
     */
    public static class Discovery {

        /**
         * Registry of engine descriptors: 'none', 'http' (the exchange endpoint of the peers under http.peers) or
         * 'redis' (entries under a lease in the Redis of spring.data.redis.*).
         */
        private String type = "none";

        /**
         * This engine's name in the registry, unique among live engines; by default spring.application.name (or
         * 'transfer-engine') and a random suffix, new on every start.
         */
        private @Nullable String name;

        /**
         * How long this engine's entry outlives its last renewal; it is renewed every third of it, so a dead engine
         * vanishes within this time.
         */
        private Duration lease = Duration.ofSeconds(15);

        /** How often a watch polls the registry for engines that appeared, changed or vanished. */
        private Duration watchInterval = Duration.ofSeconds(1);

        /**
         * The peers' base URLs by engine name, e.g. 'decode-0: http://10.0.0.2:8080' (type http only).
         */
        private Map<String, String> httpPeers = new LinkedHashMap<>();

        /** Prefix of the Redis keys of the registry (type redis). */
        private String redisKeyPrefix = "transfer-engine:";

        /**
         * Publish remote keys to a Redis that is neither on loopback nor reached over TLS or with a password (type
         * redis; anyone who reaches that Redis can then write into the published regions).
         */
        private boolean redisAllowInsecure;

        /** No registry, a lease of 15 s, a watch every second. */
        public Discovery() {
            // the defaults are the field initializers
        }

        /**
         * The registry type ({@code transfer-engine.discovery.type}).
         *
         * @return 'none' (default), 'http' or 'redis'
         */
        public String getType() {
            return type;
        }

        /**
         * Sets the registry type ({@code transfer-engine.discovery.type}).
         *
         * @param type 'none', 'http' or 'redis'
         */
        public void setType(final String type) {
            this.type = type;
        }

        /**
         * This engine's name in the registry ({@code transfer-engine.discovery.name}).
         *
         * @return the name, or null for a generated one
         */
        public @Nullable String getName() {
            return name;
        }

        /**
         * Sets this engine's name in the registry ({@code transfer-engine.discovery.name}).
         *
         * @param name the name, unique among live engines
         */
        public void setName(final @Nullable String name) {
            this.name = name;
        }

        /**
         * The lease of this engine's entry ({@code transfer-engine.discovery.lease}).
         *
         * @return the lease (default 15 s)
         */
        public Duration getLease() {
            return lease;
        }

        /**
         * Sets the lease of this engine's entry ({@code transfer-engine.discovery.lease}).
         *
         * @param lease the lease, at least 1 s
         */
        public void setLease(final Duration lease) {
            this.lease = lease;
        }

        /**
         * The polling interval of watches ({@code transfer-engine.discovery.watch-interval}).
         *
         * @return the interval (default 1 s)
         */
        public Duration getWatchInterval() {
            return watchInterval;
        }

        /**
         * Sets the polling interval of watches ({@code transfer-engine.discovery.watch-interval}).
         *
         * @param watchInterval the interval, positive
         */
        public void setWatchInterval(final Duration watchInterval) {
            this.watchInterval = watchInterval;
        }

        /**
         * The peers' base URLs by engine name ({@code transfer-engine.discovery.http-peers}).
         *
         * @return the live map, empty by default
         */
        public Map<String, String> getHttpPeers() {
            return httpPeers;
        }

        /**
         * Sets the peers' base URLs by engine name ({@code transfer-engine.discovery.http-peers}).
         *
         * @param httpPeers base URLs such as {@code http://10.0.0.2:8080}, by engine name
         */
        public void setHttpPeers(final Map<String, String> httpPeers) {
            this.httpPeers = httpPeers;
        }

        /**
         * The prefix of the registry's Redis keys ({@code transfer-engine.discovery.redis-key-prefix}).
         *
         * @return the prefix (default {@code transfer-engine:})
         */
        public String getRedisKeyPrefix() {
            return redisKeyPrefix;
        }

        /**
         * Sets the prefix of the registry's Redis keys ({@code transfer-engine.discovery.redis-key-prefix}).
         *
         * @param redisKeyPrefix the prefix
         */
        public void setRedisKeyPrefix(final String redisKeyPrefix) {
            this.redisKeyPrefix = redisKeyPrefix;
        }

        /**
         * Whether remote keys may go to an unprotected, remote Redis
         * ({@code transfer-engine.discovery.redis-allow-insecure}).
         *
         * @return true to allow it with a warning (default false: start-up fails)
         */
        public boolean isRedisAllowInsecure() {
            return redisAllowInsecure;
        }

        /**
         * Sets whether remote keys may go to an unprotected, remote Redis
         * ({@code transfer-engine.discovery.redis-allow-insecure}).
         *
         * @param redisAllowInsecure true to allow it with a warning
         */
        public void setRedisAllowInsecure(final boolean redisAllowInsecure) {
            this.redisAllowInsecure = redisAllowInsecure;
        }
    }

    /** Micrometer meters of the engines. */
    public static class Metrics {

        /** A dozen buckets, about three per decade from loopback microseconds to a timed-out request's seconds. */
        private static final List<Duration> DEFAULT_LATENCY_SLO = List.of(
                Duration.ofNanos(10_000),
                Duration.ofNanos(25_000),
                Duration.ofNanos(50_000),
                Duration.ofNanos(100_000),
                Duration.ofNanos(250_000),
                Duration.ofNanos(500_000),
                Duration.ofMillis(1),
                Duration.ofNanos(2_500_000),
                Duration.ofMillis(5),
                Duration.ofMillis(10),
                Duration.ofMillis(25),
                Duration.ofMillis(100),
                Duration.ofSeconds(1),
                Duration.ofSeconds(10));

        /**
         * Buckets of the transfer.engine.latency histogram, from 10us to 10s by default; Micrometer's percentile
         * histogram comes on top only with management.metrics.distribution.percentiles-histogram.transfer.engine.latency.
         */
        private List<Duration> latencySlo = new ArrayList<>(DEFAULT_LATENCY_SLO);

        /**
         * Most distinct peers tagged on per-peer meters; further peers are counted under peer=other.
         */
        private int maxPeerTags = 32;

        /** No extra latency buckets, 32 peer tags. */
        public Metrics() {
            // the defaults are the field initializers
        }

        /**
         * The extra latency buckets ({@code transfer-engine.metrics.latency-slo}).
         *
         * @return the buckets, empty by default
         */
        public List<Duration> getLatencySlo() {
            return latencySlo;
        }

        /**
         * Sets the extra latency buckets ({@code transfer-engine.metrics.latency-slo}).
         *
         * @param latencySlo the buckets, empty by default
         */
        public void setLatencySlo(final List<Duration> latencySlo) {
            this.latencySlo = latencySlo;
        }

        /**
         * The most distinct peers tagged on per-peer meters ({@code transfer-engine.metrics.max-peer-tags}).
         *
         * @return the bound (default 32); further peers are tagged other
         */
        public int getMaxPeerTags() {
            return maxPeerTags;
        }

        /**
         * Sets the most distinct peers tagged on per-peer meters ({@code transfer-engine.metrics.max-peer-tags}).
         *
         * @param maxPeerTags the bound (default 32); further peers are tagged other
         */
        public void setMaxPeerTags(final int maxPeerTags) {
            this.maxPeerTags = maxPeerTags;
        }
    }
}
