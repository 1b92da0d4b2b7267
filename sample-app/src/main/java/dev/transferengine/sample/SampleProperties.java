package dev.transferengine.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Settings of the sample, under {@code sample.*}.
 *
 * @param role       what this instance does
 * @param kv         the KV-cache layout and the simulated prefill compute
 * @param weights    the tensors a trainer pushes and inference nodes receive
 * @param demo       the continuous transfers of the {@code demo} role
 * @param dashboard  the live page at {@code /}
 * @param security   who may call the HTTP API and the actuator
 * @param peers      the other nodes this one may call, by name: prefill writes only to decode nodes named here,
 *                   a trainer pushes only to inference nodes named here (base URLs, e.g. {@code http://10.0.0.2:8080})
 * @param peerDnsTtl longest time the HTTP client caches a peer's DNS answer: a restarted peer keeps its name but
 *                   may get a new address
 */
@ConfigurationProperties("sample")
public record SampleProperties(
        @DefaultValue("demo") Role role,
        @DefaultValue Kv kv,
        @DefaultValue Weights weights,
        @DefaultValue Demo demo,
        @DefaultValue Dashboard dashboard,
        @DefaultValue Security security,
        @DefaultValue Map<String, String> peers,
        @DefaultValue("1s") Duration peerDnsTtl) {

    /**
     * KV-cache layout, the same on prefill and decode: {@code layers x pagesPerLayer} pages of {@code pageSize}
     * bytes, {@code tokensPerPage} tokens per page.
     *
     * @param layers         transformer layers; layer {@code l} is written with imm {@code l}
     * @param pagesPerLayer  pages per layer in the pool
     * @param pageSize       bytes per page
     * @param tokensPerPage  tokens one page holds
     * @param computeTime    simulated compute time of one layer on prefill
     * @param receiveTimeout how long decode waits for all layers of a transfer
     * @param mode           {@code push}: prefill writes each layer's pages into decode's pool; {@code pull}: prefill
     *                       only tells decode a layer is ready (an imm write) and decode reads the pages from
     *                       prefill's cache, which prefill then registers read-only. Set on prefill, which asks decode
     *                       for it per session; decode's own setting is what its dashboard shows
     */
    public record Kv(
            @DefaultValue("32") int layers,
            @DefaultValue("64") int pagesPerLayer,
            @DefaultValue("16KB") DataSize pageSize,
            @DefaultValue("16") int tokensPerPage,
            @DefaultValue("20ms") Duration computeTime,
            @DefaultValue("30s") Duration receiveTimeout,
            @DefaultValue("push") Mode mode) {

        /** How KV pages move from prefill to decode. */
        public enum Mode {
            /** Prefill writes the pages into decode's pool (one-sided writes with imm = layer). */
            PUSH,
            /** Decode reads the pages from prefill's read-only cache once prefill says a layer is ready. */
            PULL
        }

        public Kv {
            if (layers < 1 || pagesPerLayer < 1 || tokensPerPage < 1 || pageSize.toBytes() < 1) {
                throw new IllegalArgumentException(
                        "sample.kv.layers, pages-per-layer, page-size and tokens-per-page must be positive");
            }
        }
    }

    /**
     * The named tensors: {@code count} tensors of {@code size} bytes each, laid out back to back.
     *
     * @param count          number of tensors
     * @param size           bytes per tensor
     * @param receiveTimeout how long an inference node waits for the barrier of a push
     */
    public record Weights(
            @DefaultValue("16") int count,
            @DefaultValue("4MB") DataSize size,
            @DefaultValue("30s") Duration receiveTimeout) {

        public Weights {
            if (count < 1 || size.toBytes() < 8) {
                throw new IllegalArgumentException(
                        "sample.weights.count must be >= 1 and sample.weights.size >= 8 bytes");
            }
        }
    }

    /**
     * The {@code demo} role's loop.
     *
     * @param interval pause between two transfers
     * @param tokens   tokens per transfer
     */
    public record Demo(
            @DefaultValue("1s") Duration interval,
            @DefaultValue("512") int tokens) {}

    /**
     * The live dashboard.
     *
     * @param interval   time between two snapshots sent to the page
     * @param rateWindow rates are averaged over this long: the demo's transfers come in bursts once a second, and a
     *                   rate between two snapshots half a second apart zig-zags between nothing and twice the mean
     * @param history    how much history the server keeps, so that a page opened now starts with full charts
     */
    public record Dashboard(
            @DefaultValue("500ms") Duration interval,
            @DefaultValue("5s") Duration rateWindow,
            @DefaultValue("60s") Duration history) {

        public Dashboard {
            if (interval.isNegative()
                    || interval.isZero()
                    || rateWindow.compareTo(interval) < 0
                    || history.compareTo(rateWindow) < 0) {
                throw new IllegalArgumentException("sample.dashboard needs 0 < interval <= rate-window <= history, got "
                        + interval + ", " + rateWindow + ", " + history);
            }
        }
    }

    /**
     * Access to the HTTP API and the actuator: every request needs {@code Authorization: Bearer <token>}, except the
     * actuator endpoints in {@code openEndpoints} and, where {@code openDashboard}, the dashboard.
     *
     * @param token         the token callers present and this node presents to its peers, the same on every node;
     *                      required in every role but {@code demo}, where a random one is made at start
     * @param openEndpoints actuator endpoint ids readable without a token, e.g. {@code health} for probes
     * @param openDashboard whether {@code /} and its event stream need no token; unset: only in the {@code demo} role
     */
    public record Security(
            @Nullable String token,
            @DefaultValue("health") List<String> openEndpoints,
            @Nullable Boolean openDashboard) {}
}
