package dev.transferengine.bench;

import dev.transferengine.moe.LayerTimings;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What {@code te-bench moe} measured of one case (transport, T, exchange) over its measured layers, pooled over its
 * rounds: per layer the dispatch and combine of the critical path, the dispatcher's layer, the posting of all ranks
 * summed and the posting on the critical path, each stage of the slowest rank, and the bytes sent. Not thread-safe.
 *
 * <p>Two posting figures, because the ranks post in parallel, each on its own thread: {@code summed} adds every rank's
 * time inside submit (scatters and barriers), a cost in CPU time that compared to dispatch + combine mixes two clocks
 * (nine ranks' work against one path through them); {@code critical} is the posting that lies on the path that
 * dispatch + combine measures: the submit of the slowest dispatcher's dispatch scatter plus the submit of the combine
 * scatter of the expert rank whose combine took longest. Issue 20's goal ("its posting cost per layer under 10 % of the
 * layer's transfer time") is read against the critical one; the summed one stays in the table as the CPU's bill.
 */
final class MoeSamples {

    /** The stages: the dispatchers' compute, dispatch, combine, barrier, then the expert ranks' same four. */
    private static final int STAGES = 8;

    private long[] dispatch = new long[0];
    private long[] combine = new long[0];
    private long[] layer = new long[0];
    private long[] posting = new long[0];
    /** Per layer the exchange posting of the dispatcher whose dispatch is in {@code dispatch}. */
    private long[] dispatchPosting = new long[0];
    /** Per layer the exchange posting of the expert rank whose combine is in {@code combine}. */
    private long[] combinePosting = new long[0];

    private long[][] stage = new long[STAGES][0];
    private long sent;

    /** Room for {@code layers} more layers; returns the index of the first. */
    private int grow(final int layers) {
        final int first = dispatch.length;
        dispatch = Arrays.copyOf(dispatch, first + layers);
        combine = Arrays.copyOf(combine, first + layers);
        layer = Arrays.copyOf(layer, first + layers);
        posting = Arrays.copyOf(posting, first + layers);
        dispatchPosting = Arrays.copyOf(dispatchPosting, first + layers);
        combinePosting = Arrays.copyOf(combinePosting, first + layers);
        for (int s = 0; s < STAGES; s++) {
            stage[s] = Arrays.copyOf(stage[s], first + layers);
        }
        return first;
    }

    /** Starts the next measured layer; returns its index. */
    int nextLayer() {
        return grow(1);
    }

    /** Adds one rank's timings of layer {@code i}; {@code dispatcher} says which role the rank has. */
    void add(final int i, final LayerTimings timing, final boolean dispatcher) {
        final int first = dispatcher ? 0 : 4;
        stage[first][i] = Math.max(stage[first][i], timing.computeNanos());
        stage[first + 1][i] = Math.max(stage[first + 1][i], timing.dispatchNanos());
        stage[first + 2][i] = Math.max(stage[first + 2][i], timing.combineNanos());
        stage[first + 3][i] = Math.max(stage[first + 3][i], timing.barrierNanos());
        if (dispatcher) {
            if (timing.dispatchNanos() >= dispatch[i]) {
                dispatch[i] = timing.dispatchNanos();
                dispatchPosting[i] = timing.exchangePostingNanos();
            }
            layer[i] = Math.max(layer[i], timing.layerNanos());
        } else if (timing.combineNanos() >= combine[i]) {
            combine[i] = timing.combineNanos();
            combinePosting[i] = timing.exchangePostingNanos();
        }
        posting[i] += timing.postingNanos();
        sent += timing.sentBytes();
    }

    /** The main table's cells after the case's label. */
    String cells() {
        final int layers = dispatch.length;
        final long[] transfer = new long[layers];
        final long[] critical = new long[layers];
        for (int i = 0; i < layers; i++) {
            transfer[i] = dispatch[i] + combine[i];
            critical[i] = dispatchPosting[i] + combinePosting[i];
        }
        return String.format(
                Locale.ROOT,
                " | %s / %s | %s / %s | %s / %s | %s | %s | %s | %s | %s |",
                micros(percentile(dispatch, 50)),
                micros(percentile(dispatch, 99)),
                micros(percentile(combine, 50)),
                micros(percentile(combine, 99)),
                micros(percentile(layer, 50)),
                micros(percentile(layer, 99)),
                micros(percentile(posting, 50)),
                share(posting, transfer),
                micros(percentile(critical, 50)),
                share(critical, transfer),
                size(sent / layers));
    }

    /** p50 of {@code posting} against p50 of {@code transfer}, in percent. */
    static String share(final long[] posting, final long[] transfer) {
        return String.format(Locale.ROOT, "%.1f%%", 100.0 * percentile(posting, 50) / percentile(transfer, 50));
    }

    /** The stage table's cells after the case's label: p50 of each stage, the expert ranks' in the order they run. */
    String stageCells() {
        final StringBuilder cells = new StringBuilder();
        for (final int index : List.of(0, 1, 2, 3, 5, 4, 6, 7)) {
            cells.append(" | ").append(micros(percentile(stage[index], 50)));
        }
        return cells.append(" |").toString();
    }

    static long percentile(final long[] values, final int percent) {
        final long[] sorted = Arrays.copyOf(values, values.length);
        Arrays.sort(sorted);
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(percent / 100.0 * sorted.length) - 1)];
    }

    static String size(final long bytes) {
        return bytes >= 1 << 20
                ? String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1 << 20))
                : String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }

    static String micros(final long nanos) {
        return String.format(Locale.ROOT, "%.0f", nanos / 1000.0);
    }
}
