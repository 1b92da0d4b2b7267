package dev.transferengine.bench;

import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;

/**
 * The JSON line a run ends with (snake_case keys). Rates are per second of the measured interval; GB/s is 1e9
 * bytes per second; latencies are from submit to completion (round trip for {@code imm}) in microseconds.
 *
 * @param op           {@code write}, {@code "paged"}, {@code read}, {@code paged-read} or {@code imm}
 * @param transport    the engine's transport
 * @param provider     the libfabric provider, for {@code fabric}
 * @param nics         NICs per engine
 * @param routing      {@code sharded} or {@code pinned}, for {@code write}
 * @param size         bytes per write; per page for {@code "paged"}; 0 for {@code imm}
 * @param pages        pages per request, for {@code "paged"}
 * @param window       writes kept in flight
 * @param durationS    length of the measured interval
 * @param ops          operations completed in it: writes, pages, or round trips
 * @param opsPerS      {@code ops} per second
 * @param requestsPerS requests per second (differs from {@code ops_per_s} for {@code "paged"} only)
 * @param gbPerS       payload GB/s: bytes per second / 1e9 (key {@code gb_per_s}; not gigabits)
 * @param p50Us        median latency per request
 * @param p99Us        99th percentile
 * @param p999Us       99.9th percentile
 * @param maxUs        largest latency seen
 * @param errors       failed requests (a sane run has none)
 * @param tls          whether the connections ran TLS
 * @param connectMs    the descriptor exchange before the run: connecting both ways (TCP, TLS if on, the cluster-key
 *                     handshake), one send and its answer
 * @param stagesUs     with {@code --stages}: p50/p99 of each stage in microseconds (see {@link StageRecorder})
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record BenchResult(
        String op,
        String transport,
        @Nullable String provider,
        int nics,
        @Nullable String routing,
        long size,
        @Nullable Integer pages,
        int window,
        double durationS,
        long ops,
        double opsPerS,
        double requestsPerS,
        double gbPerS,
        double p50Us,
        double p99Us,
        double p999Us,
        double maxUs,
        long errors,
        boolean tls,
        double connectMs,
        @Nullable Map<String, Double> stagesUs) {}
