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

    private final Timeouts timeouts = new Timeouts();

    private final Exchange exchange = new Exchange();

    private final Metrics metrics = new Metrics();

    public String getTransport() {
        return transport;
    }

    public void setTransport(final String transport) {
        this.transport = transport;
    }

    public List<Group> getGroups() {
        return groups;
    }

    public void setGroups(final List<Group> groups) {
        this.groups = groups;
    }

    public String getBindAddress() {
        return bindAddress;
    }

    public void setBindAddress(final String bindAddress) {
        this.bindAddress = bindAddress;
    }

    public int getBasePort() {
        return basePort;
    }

    public void setBasePort(final int basePort) {
        this.basePort = basePort;
    }

    public Map<String, String> getOptions() {
        return options;
    }

    public void setOptions(final Map<String, String> options) {
        this.options = options;
    }

    public Fabric getFabric() {
        return fabric;
    }

    public Tcp getTcp() {
        return tcp;
    }

    public Worker getWorker() {
        return worker;
    }

    public Receive getReceive() {
        return receive;
    }

    public Timeouts getTimeouts() {
        return timeouts;
    }

    public Exchange getExchange() {
        return exchange;
    }

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

        public int getNics() {
            return nics;
        }

        public void setNics(final int nics) {
            this.nics = nics;
        }

        public @Nullable Integer getWorkerCpu() {
            return workerCpu;
        }

        public void setWorkerCpu(final @Nullable Integer workerCpu) {
            this.workerCpu = workerCpu;
        }

        public @Nullable Integer getCudaDevice() {
            return cudaDevice;
        }

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

        public @Nullable String getProvider() {
            return provider;
        }

        public void setProvider(final @Nullable String provider) {
            this.provider = provider;
        }

        public @Nullable String getLibraryPath() {
            return libraryPath;
        }

        public void setLibraryPath(final @Nullable String libraryPath) {
            this.libraryPath = libraryPath;
        }
    }

    /** Peer authentication of the 'tcp' transport (see docs/security.md). */
    public static class Tcp {

        /**
         * Cluster key every engine of the cluster shares (at least 16 bytes); 'new,old' accepts two during rotation.
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

        public @Nullable String getClusterKey() {
            return clusterKey;
        }

        public void setClusterKey(final @Nullable String clusterKey) {
            this.clusterKey = clusterKey;
        }

        public @Nullable String getClusterKeyFile() {
            return clusterKeyFile;
        }

        public void setClusterKeyFile(final @Nullable String clusterKeyFile) {
            this.clusterKeyFile = clusterKeyFile;
        }

        public boolean isInsecure() {
            return insecure;
        }

        public void setInsecure(final boolean insecure) {
            this.insecure = insecure;
        }

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

        public @Nullable String getBundle() {
            return bundle;
        }

        public void setBundle(final @Nullable String bundle) {
            this.bundle = bundle;
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

        public IdleStrategyKind getIdleStrategy() {
            return idleStrategy;
        }

        public void setIdleStrategy(final IdleStrategyKind idleStrategy) {
            this.idleStrategy = idleStrategy;
        }

        public int getSubmitQueueCapacity() {
            return submitQueueCapacity;
        }

        public void setSubmitQueueCapacity(final int submitQueueCapacity) {
            this.submitQueueCapacity = submitQueueCapacity;
        }

        public int getMaxInFlight() {
            return maxInFlight;
        }

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
         * Size of each receive buffer; longer messages cannot be received.
         */
        private DataSize bufferSize = DataSize.ofKilobytes(64);

        public int getPoolSize() {
            return poolSize;
        }

        public void setPoolSize(final int poolSize) {
            this.poolSize = poolSize;
        }

        public DataSize getBufferSize() {
            return bufferSize;
        }

        public void setBufferSize(final DataSize bufferSize) {
            this.bufferSize = bufferSize;
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

        public Duration getOperation() {
            return operation;
        }

        public void setOperation(final Duration operation) {
            this.operation = operation;
        }

        public Duration getImm() {
            return imm;
        }

        public void setImm(final Duration imm) {
            this.imm = imm;
        }

        public Duration getDrain() {
            return drain;
        }

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

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(final boolean enabled) {
            this.enabled = enabled;
        }

        public String getPath() {
            return path;
        }

        public void setPath(final String path) {
            this.path = path;
        }
    }

    /** Micrometer meters of the engines. */
    public static class Metrics {

        /**
         * Latency buckets (service level objectives) published with the transfer.engine.latency histogram, besides
         * the percentile histogram; e.g. 100us,1ms,10ms.
         */
        private List<Duration> latencySlo = new ArrayList<>();

        /**
         * Most distinct peers tagged on per-peer meters; further peers are counted under peer=other.
         */
        private int maxPeerTags = 32;

        public List<Duration> getLatencySlo() {
            return latencySlo;
        }

        public void setLatencySlo(final List<Duration> latencySlo) {
            this.latencySlo = latencySlo;
        }

        public int getMaxPeerTags() {
            return maxPeerTags;
        }

        public void setMaxPeerTags(final int maxPeerTags) {
            this.maxPeerTags = maxPeerTags;
        }
    }
}
