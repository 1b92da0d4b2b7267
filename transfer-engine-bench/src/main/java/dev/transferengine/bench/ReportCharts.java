package dev.transferengine.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;
import tools.jackson.databind.JsonNode;

/**
 * The plots of {@code te-bench report} (XChart, so java.desktop): {@code bandwidth.png} (GB/s against message size
 * per transport, beside its C anchor), {@code latency.png} (imm round trips beside the anchors) and
 * {@code pages.png} (paged writes, pages per second). Loaded only where java.desktop is present.
 */
final class ReportCharts {

    private final Path dir;
    private final List<String> written = new ArrayList<>();

    private ReportCharts(final Path dir) {
        this.dir = dir;
    }

    /**
     * Writes the plots that have data into {@code dir}: {@code sweep} holds the sweep lines, {@code latency} and
     * {@code pages} the table's medians per case, {@code jmh} JMH's results. Returns the files written.
     */
    static List<String> write(
            final Path dir,
            final List<ReportLine> sweep,
            final Map<String, double[]> latency,
            final Map<String, Double> pages,
            final JsonNode jmh)
            throws IOException {
        final ReportCharts charts = new ReportCharts(dir);
        charts.bandwidth(sweep);
        charts.latency(latency);
        charts.pages(pages, jmh);
        return charts.written;
    }

    private void save(final org.knowm.xchart.internal.chartpart.Chart<?, ?> chart, final String name)
            throws IOException {
        BitmapEncoder.saveBitmap(chart, dir.resolve(name).toString(), BitmapEncoder.BitmapFormat.PNG);
        written.add(name);
    }

    private void bandwidth(final List<ReportLine> sweep) throws IOException {
        final XYChart chart = new XYChartBuilder()
                .width(1000)
                .height(600)
                .title("Bandwidth vs message size (loopback, window 16), engine beside its C anchor")
                .xAxisTitle("message size (bytes)")
                .yAxisTitle("GB/s (1e9 bytes/s)")
                .build();
        chart.getStyler()
                .setXAxisLogarithmic(true)
                .setLegendPosition(Styler.LegendPosition.InsideNW)
                .setChartBackgroundColor(Color.WHITE)
                .setMarkerSize(7);
        final String[][] sweeps = {
            {"sweep-tcp", "tcp engine", "iperf3 (one stream)"},
            {"sweep-fabric-shm", "fabric/shm engine", "fi_rma_bw -o writedata (shm)"},
            {"sweep-fabric-tcp", "fabric/tcp engine", "fi_rma_bw -o writedata (tcp)"}
        };
        final Color[] colors = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c)};
        boolean any = false;
        for (int t = 0; t < sweeps.length; t++) {
            final List<Double> sizes = new ArrayList<>();
            final List<Double> engine = new ArrayList<>();
            final List<Double> anchor = new ArrayList<>();
            for (final ReportLine line : sweep) {
                if (line.group().equals(sweeps[t][0]) && !Double.isNaN(line.number("anchor_gb_per_s"))) {
                    sizes.add(line.number("size"));
                    engine.add(line.number("gb_per_s"));
                    anchor.add(line.number("anchor_gb_per_s"));
                }
            }
            if (sizes.isEmpty()) {
                continue;
            }
            any = true;
            final XYSeries e = chart.addSeries(sweeps[t][1], sizes, engine);
            e.setLineColor(colors[t]);
            e.setMarkerColor(colors[t]);
            e.setMarker(SeriesMarkers.CIRCLE);
            final XYSeries a = chart.addSeries(sweeps[t][2], sizes, anchor);
            a.setLineColor(colors[t]);
            a.setMarkerColor(colors[t]);
            a.setMarker(SeriesMarkers.DIAMOND);
            a.setLineStyle(
                    new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
        }
        if (any) {
            save(chart, "bandwidth.png");
        }
    }

    /** {@code latency}: per imm case, the medians of p50, p99 and the anchor's round trip (NaN: none). */
    private void latency(final Map<String, double[]> latency) throws IOException {
        if (latency.isEmpty()) {
            return;
        }
        final CategoryChart chart = new CategoryChartBuilder()
                .width(1000)
                .height(600)
                .title("imm round trip (one at a time, spinning), medians over the rounds, beside the C anchor")
                .xAxisTitle("case")
                .yAxisTitle("microseconds")
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW).setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setLabelsVisible(true);
        final List<String> names = new ArrayList<>(latency.keySet());
        final String[] series = {"engine p50", "engine p99", "C anchor (tcp_pingpong p50 / 2 x fi_rma_pingpong)"};
        for (int s = 0; s < series.length; s++) {
            final List<Double> values = new ArrayList<>();
            for (final double[] figures : latency.values()) {
                values.add(Double.isNaN(figures[s]) ? 0 : figures[s]);
            }
            chart.addSeries(series[s], names, values);
        }
        save(chart, "latency.png");
    }

    /** {@code pages}: M pages/s per paged case (medians); JMH's {@code pagedWrite} beside them. */
    private void pages(final Map<String, Double> pages, final JsonNode jmh) throws IOException {
        final Map<String, Double> bars = new LinkedHashMap<>();
        for (final JsonNode r : jmh) {
            if (r.path("benchmark").asString().endsWith(".pagedWrite")) {
                bars.put(
                        "JMH " + r.path("params").path("transport").asString() + " x256 (in-JVM)",
                        Math.round(r.path("primaryMetric").path("score").asDouble() / 1e4) / 100.0);
            }
        }
        bars.putAll(pages);
        if (bars.isEmpty()) {
            return;
        }
        final CategoryChart chart = new CategoryChartBuilder()
                .width(1200)
                .height(600)
                .title("Paged writes of 1 KiB pages: million pages per second (one worker), medians over the rounds")
                .xAxisTitle("case")
                .yAxisTitle("M pages/s")
                .build();
        chart.getStyler().setLegendVisible(false).setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setLabelsVisible(true).setXAxisLabelRotation(30);
        chart.addSeries("pages/s", new ArrayList<>(bars.keySet()), new ArrayList<>(bars.values()));
        save(chart, "pages.png");
    }
}
