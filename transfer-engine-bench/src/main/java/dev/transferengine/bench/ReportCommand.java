package dev.transferengine.bench;

import java.awt.Color;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code te-bench report}: turns report.sh's JSON lines (and JMH's JSON result) into {@code benchmarks.md} and its
 * plots: {@code bandwidth.png} (GB/s against message size per transport, beside its C anchor), {@code latency.png}
 * (imm round-trip percentiles beside the anchors) and {@code pages.png} (paged-write pages per second). Reads and
 * writes files only; no engine runs.
 */
@Command(
        name = "report",
        mixinStandardHelpOptions = true,
        description = "Write benchmarks.md and PNG plots from report.sh's report.jsonl (and JMH's json).")
public final class ReportCommand implements Callable<Integer> {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String MAIN_JAR = "te-bench.jar";
    private static final String BEFORE_JAR = "before";
    private static final String RESULTS_MARKER = "<!-- results -->";

    @Option(names = "--in", required = true, description = "report.jsonl written by report.sh")
    Path in;

    @Option(names = "--jmh", description = "JMH's -rf json result (optional)")
    Path jmh;

    @Option(names = "--out", required = true, description = "folder for benchmarks.md and the PNGs")
    Path out;

    @Option(names = "--template", description = "markdown with a '<!-- results -->' line that the results replace")
    Path template;

    @Option(
            names = "--images",
            defaultValue = "images",
            description = "folder under --out for the PNGs, as benchmarks.md links them (default ${DEFAULT-VALUE})")
    String images;

    private Path imageDir() {
        return out.resolve(images);
    }

    /** One case line: {"case", "jar", "group", "args", "result"}. */
    private record Case(String name, String jar, String group, String args, JsonNode result) {

        double gb() {
            return result.path("gb_per_s").asDouble();
        }

        double p50() {
            return result.path("p50_us").asDouble();
        }

        boolean isImm() {
            return "imm".equals(result.path("op").asString());
        }

        boolean isPaged() {
            return "paged".equals(result.path("op").asString());
        }
    }

    @Override
    public Integer call() throws IOException {
        JsonNode meta = JSON.createObjectNode();
        final List<Case> cases = new ArrayList<>();
        for (final String line : Files.readAllLines(in, StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            final JsonNode node = JSON.readTree(line);
            if (node.has("meta")) {
                meta = node.get("meta");
            } else {
                cases.add(new Case(
                        node.path("case").asString(),
                        node.path("jar").asString(),
                        node.path("group").asString(),
                        node.path("args").asString(),
                        node.get("result")));
            }
        }
        final JsonNode jmhResults = jmh != null && Files.isRegularFile(jmh) && Files.size(jmh) > 0
                ? JSON.readTree(jmh.toFile())
                : JSON.createArrayNode();
        Files.createDirectories(imageDir());
        bandwidthChart(cases);
        latencyChart(cases);
        pagesChart(cases, jmhResults);
        final String results = markdown(meta, cases, jmhResults);
        final String page;
        if (template == null) {
            page = "# Benchmarks\n\n" + results;
        } else {
            final String text = Files.readString(template, StandardCharsets.UTF_8);
            if (!text.contains(RESULTS_MARKER)) {
                throw new IOException(template + " has no '" + RESULTS_MARKER + "' line for the results");
            }
            page = text.replace(RESULTS_MARKER, results.strip());
        }
        Files.writeString(out.resolve("benchmarks.md"), page, StandardCharsets.UTF_8);
        System.out.println("wrote " + out.resolve("benchmarks.md") + " and bandwidth.png, latency.png, pages.png");
        return 0;
    }

    // ---- plots -------------------------------------------------------------------------------------------------

    private void bandwidthChart(final List<Case> cases) throws IOException {
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
            for (final Case c : cases) {
                if (c.group().equals(sweeps[t][0])
                        && c.jar().equals(MAIN_JAR)
                        && c.result().has("anchor_gb_per_s")) {
                    sizes.add(c.result().path("size").asDouble());
                    engine.add(c.gb());
                    anchor.add(c.result().path("anchor_gb_per_s").asDouble());
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
            a.setLineStyle(new java.awt.BasicStroke(
                    1.5f,
                    java.awt.BasicStroke.CAP_BUTT,
                    java.awt.BasicStroke.JOIN_MITER,
                    10f,
                    new float[] {6f, 4f},
                    0f));
        }
        if (any) {
            BitmapEncoder.saveBitmap(
                    chart, imageDir().resolve("bandwidth.png").toString(), BitmapEncoder.BitmapFormat.PNG);
        }
    }

    private void latencyChart(final List<Case> cases) throws IOException {
        final List<String> names = new ArrayList<>();
        final List<Double> p50 = new ArrayList<>();
        final List<Double> p99 = new ArrayList<>();
        final List<Double> p999 = new ArrayList<>();
        final List<Double> anchor = new ArrayList<>();
        for (final Case c : cases) {
            if (c.group().equals("table") && c.jar().equals(MAIN_JAR) && c.isImm()) {
                names.add(c.name());
                p50.add(c.p50());
                p99.add(c.result().path("p99_us").asDouble());
                p999.add(c.result().path("p999_us").asDouble());
                anchor.add(c.result().path("anchor_round_trip_us").asDouble());
            }
        }
        if (names.isEmpty()) {
            return;
        }
        final CategoryChart chart = new CategoryChartBuilder()
                .width(1000)
                .height(600)
                .title("imm round trip (one at a time, spinning), engine percentiles beside the C anchor's round trip")
                .xAxisTitle("case")
                .yAxisTitle("microseconds")
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW).setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setLabelsVisible(true);
        chart.addSeries("engine p50", names, p50);
        chart.addSeries("engine p99", names, p99);
        chart.addSeries("engine p99.9", names, p999);
        chart.addSeries("C anchor (tcp_pingpong p50 / 2 x fi_rma_pingpong)", names, anchor);
        BitmapEncoder.saveBitmap(chart, imageDir().resolve("latency.png").toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private void pagesChart(final List<Case> cases, final JsonNode jmhResults) throws IOException {
        final Map<String, Double> bars = new LinkedHashMap<>();
        for (final JsonNode r : jmhResults) {
            if (r.path("benchmark").asString().endsWith(".pagedWrite")) {
                bars.put(
                        "JMH " + r.path("params").path("transport").asString() + " (in-JVM)",
                        round2(r.path("primaryMetric").path("score").asDouble() / 1e6));
            }
        }
        for (final Case c : cases) {
            if (c.group().equals("table") && c.jar().equals(MAIN_JAR) && c.isPaged()) {
                bars.put(
                        c.name().replace("-paged-1KiBx256", ""),
                        round2(c.result().path("ops_per_s").asDouble() / 1e6));
            }
        }
        if (bars.isEmpty()) {
            return;
        }
        final CategoryChart chart = new CategoryChartBuilder()
                .width(1000)
                .height(600)
                .title("Paged writes, 256 pages of 1 KiB per request: million pages per second (one worker)")
                .xAxisTitle("case")
                .yAxisTitle("M pages/s")
                .build();
        chart.getStyler().setLegendVisible(false).setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setLabelsVisible(true);
        chart.addSeries("pages/s", new ArrayList<>(bars.keySet()), new ArrayList<>(bars.values()));
        BitmapEncoder.saveBitmap(chart, imageDir().resolve("pages.png").toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    // ---- markdown ----------------------------------------------------------------------------------------------

    private String markdown(final JsonNode meta, final List<Case> cases, final JsonNode jmhResults) {
        final StringBuilder md = new StringBuilder();
        md.append("## Results\n\n");
        md.append("Generated by `transfer-engine-bench/report.sh` and `te-bench report` from the run of ")
                .append(meta.path("date").asString())
                .append(": ")
                .append(meta.path("cpus").asInt())
                .append(" CPUs (")
                .append(meta.path("cpu").asString())
                .append("), kernel ")
                .append(meta.path("kernel").asString())
                .append(", ")
                .append(meta.path("java").asString())
                .append(", libfabric ")
                .append(meta.path("libfabric").asString())
                .append(", ")
                .append(meta.path("iperf3").asString())
                .append(
                        ". Loopback, two processes (te-bench spawns its `serve` peer), idle host. Each case ran once for ")
                .append(meta.path("duration").asString())
                .append(" after a 1 s warm-up (sweep: ")
                .append(meta.path("sweep_duration").asString())
                .append(" after 0.5 s); its C anchor ran right after it, "
                        + "in the same `te-bench write --compare` invocation. `ratio` is engine/anchor for bandwidth and "
                        + "engine p50 / anchor round trip for imm; goals (issue 11): bandwidth >= 0.9, round trip <= 1.5, "
                        + "paged posting rate >= 10 M pages/s per worker at the posting boundary, 0 B/op steady-state "
                        + "allocation.\n\n");
        md.append("### Engine beside its C anchor\n\n");
        md.append("| case | engine | anchor | anchor figure | ratio | goal | met |\n|---|---|---|---|---|---|---|\n");
        for (final Case c : cases) {
            if (!c.group().equals("table") || !c.jar().equals(MAIN_JAR)) {
                continue;
            }
            final JsonNode r = c.result();
            final String engine = c.isImm()
                    ? fmt(c.p50()) + " us p50 (p99 " + fmt(r.path("p99_us").asDouble()) + ")"
                    : c.isPaged() ? fmt(r.path("ops_per_s").asDouble() / 1e6) + " M pages/s" : fmt(c.gb()) + " GB/s";
            final String anchor = r.path("anchor").asString("none");
            final String figure = r.has("anchor_gb_per_s")
                    ? fmt(r.path("anchor_gb_per_s").asDouble()) + " GB/s"
                    : r.has("anchor_round_trip_us")
                            ? fmt(r.path("anchor_round_trip_us").asDouble()) + " us round trip"
                            : "—";
            md.append("| ")
                    .append(c.name())
                    .append(" | ")
                    .append(engine)
                    .append(" | ")
                    .append(anchor)
                    .append(" | ")
                    .append(figure)
                    .append(" | ")
                    .append(r.has("ratio") ? fmt(r.path("ratio").asDouble()) : "—")
                    .append(" | ")
                    .append(r.path("goal").asString("—"))
                    .append(" | ")
                    .append(r.has("goal_met") ? (r.path("goal_met").asBoolean() ? "yes" : "**no**") : "—")
                    .append(" |\n");
        }
        md.append("\n![latency](").append(images).append("/latency.png)\n\n");
        beforeAfter(md, cases);
        stages(md, cases);
        variants(md, cases);
        sweep(md, cases);
        jmhTable(md, jmhResults);
        md.append("\n![pages](").append(images).append("/pages.png)\n");
        return md.toString();
    }

    private static void beforeAfter(final StringBuilder md, final List<Case> cases) {
        final Map<String, Case> before = new LinkedHashMap<>();
        for (final Case c : cases) {
            if (c.group().equals("table") && c.jar().equals(BEFORE_JAR)) {
                before.put(c.name(), c);
            }
        }
        if (before.isEmpty()) {
            return;
        }
        md.append(
                "### Before and after (same run; before = the engine and bench classes of the previous main, first on "
                        + "the class path)\n\n");
        md.append("| case | before | after |\n|---|---|---|\n");
        for (final Case c : cases) {
            final Case b = before.get(c.name());
            if (b != null && c.group().equals("table") && c.jar().equals(MAIN_JAR)) {
                md.append("| ")
                        .append(c.name())
                        .append(" | ")
                        .append(figure(b))
                        .append(" | ")
                        .append(figure(c))
                        .append(" |\n");
            }
        }
        md.append('\n');
    }

    private static String figure(final Case c) {
        final JsonNode r = c.result();
        if (c.isImm()) {
            return fmt(c.p50()) + " us p50";
        }
        if (c.isPaged()) {
            return fmt(r.path("ops_per_s").asDouble() / 1e6) + " M pages/s";
        }
        // the before jar may predate the gb_per_s key
        final double gb = r.has("gb_per_s")
                ? r.path("gb_per_s").asDouble()
                : r.path("gbps").asDouble();
        return fmt(gb) + " GB/s";
    }

    private static void stages(final StringBuilder md, final List<Case> cases) {
        md.append("### Where the time goes (`--stages`, p50 / p99 in us)\n\n");
        md.append("queue: submit to the worker taking it; post: taken to the last piece handed to the transport; "
                + "wire: posted to the completion read by the worker (imm: to the pong's arrival, i.e. both hops and the "
                + "whole remote side); notify: the pong's arrival to the polling thread seeing it.\n\n");
        md.append("| case | total p50 | queue | post | wire | notify |\n|---|---|---|---|---|---|\n");
        for (final Case c : cases) {
            final JsonNode s = c.result().path("stages_us");
            if (!c.group().equals("stages") || s.isMissingNode()) {
                continue;
            }
            md.append("| ")
                    .append(c.name())
                    .append(" | ")
                    .append(fmt(c.p50()))
                    .append(" | ")
                    .append(pair(s, "queue"))
                    .append(" | ")
                    .append(pair(s, "post"))
                    .append(" | ")
                    .append(pair(s, "wire"))
                    .append(" | ")
                    .append(s.has("notify_p50") ? pair(s, "notify") : "—")
                    .append(" |\n");
        }
        md.append('\n');
    }

    private static String pair(final JsonNode stages, final String name) {
        return fmt(stages.path(name + "_p50").asDouble()) + " / "
                + fmt(stages.path(name + "_p99").asDouble());
    }

    private static void variants(final StringBuilder md, final List<Case> cases) {
        md.append("### Variants (idle strategy, completion semantics, window, region)\n\n");
        md.append("| case | options | GB/s | p50 us |\n|---|---|---|---|\n");
        for (final Case c : cases) {
            if (c.group().equals("variants")) {
                md.append("| ")
                        .append(c.name())
                        .append(" | `")
                        .append(options(c.args()))
                        .append("` | ")
                        .append(fmt(c.gb()))
                        .append(" | ")
                        .append(fmt(c.p50()))
                        .append(" |\n");
            }
        }
        md.append('\n');
    }

    private static String options(final String args) {
        return args.replaceAll("--option fabric.library=\\S+", "")
                .replaceAll("--duration \\S+ --warmup \\S+", "")
                .replaceAll("\\s+", " ")
                .strip();
    }

    private void sweep(final StringBuilder md, final List<Case> cases) {
        md.append("### Bandwidth vs message size\n\n![bandwidth](")
                .append(images)
                .append("/bandwidth.png)\n\n");
        md.append(
                "| size | tcp | iperf3 | ratio | fabric/shm | fi_rma_bw shm | ratio | fabric/tcp | fi_rma_bw tcp | ratio |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|\n");
        final Map<Long, String[]> rows = new LinkedHashMap<>();
        final String[] groups = {"sweep-tcp", "sweep-fabric-shm", "sweep-fabric-tcp"};
        for (final Case c : cases) {
            for (int g = 0; g < groups.length; g++) {
                if (c.group().equals(groups[g])) {
                    final String[] row =
                            rows.computeIfAbsent(c.result().path("size").asLong(), k -> new String[9]);
                    row[3 * g] = fmt(c.gb());
                    row[3 * g + 1] = fmt(c.result().path("anchor_gb_per_s").asDouble());
                    row[3 * g + 2] = fmt(c.result().path("ratio").asDouble());
                }
            }
        }
        for (final Map.Entry<Long, String[]> row : rows.entrySet()) {
            md.append("| ").append(sizeText(row.getKey()));
            for (final String cell : row.getValue()) {
                md.append(" | ").append(cell == null ? "—" : cell);
            }
            md.append(" |\n");
        }
        md.append('\n');
    }

    private static void jmhTable(final StringBuilder md, final JsonNode jmhResults) {
        if (jmhResults.isEmpty()) {
            return;
        }
        md.append("### JMH: posting rate and allocation (`te-bench jmh SubmitPathBenchmark -p transport=instant,tcp "
                + "-prof gc`)\n\n");
        md.append(
                "`instant`: a transport whose NICs complete each write inside its post call (the engine alone, up "
                        + "to the posting boundary); `tcp`: two engines over loopback in one JVM. pagedWrite counts pages.\n\n");
        md.append("| benchmark | transport | score | unit | alloc B/op |\n|---|---|---|---|---|\n");
        for (final JsonNode r : jmhResults) {
            final String name = r.path("benchmark").asString();
            md.append("| ")
                    .append(name.substring(name.lastIndexOf('.') + 1))
                    .append(" | ")
                    .append(r.path("params").path("transport").asString())
                    .append(" | ")
                    .append(fmt(r.path("primaryMetric").path("score").asDouble()))
                    .append(" | ")
                    .append(r.path("primaryMetric").path("scoreUnit").asString())
                    .append(" | ")
                    .append(fmt(r.path("secondaryMetrics")
                            .path("gc.alloc.rate.norm")
                            .path("score")
                            .asDouble()))
                    .append(" |\n");
        }
    }

    private static double round2(final double value) {
        return Math.round(value * 100) / 100.0;
    }

    private static String sizeText(final long bytes) {
        return bytes >= 1 << 20 && bytes % (1 << 20) == 0
                ? bytes / (1 << 20) + " MiB"
                : bytes >= 1 << 10 && bytes % (1 << 10) == 0 ? bytes / (1 << 10) + " KiB" : bytes + " B";
    }

    private static String fmt(final double value) {
        if (value >= 1e5) {
            return String.format(Locale.ROOT, "%,.0f", value);
        }
        return String.format(Locale.ROOT, value >= 100 ? "%.1f" : "%.2f", value);
    }
}
