package dev.transferengine.bench;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The table of {@code te-bench report}: one row per case of report.sh's table, medians over its rounds. The engine's
 * figure is GB/s, pages/s (paged against a message rate) or the round trip's p50 (imm); the anchor's is the C
 * program's figure from the same invocation, or for a case with a {@code baseline} that case's GB/s in the same
 * round. ratio = median engine / median anchor. Every round's figures are listed, and a round without a result says
 * why; a case without any result is a FAILED row, never left out. Under a case that report.sh also held against a C
 * program run right after it in every round ({@link Beside}) a second row puts the engine's figure beside that
 * program's. A case run with {@code --huge-pages} says how much of each region huge pages backed.
 */
final class ReportTable {

    /**
     * A C program report.sh runs right after a table case in every round, recorded in its own group with
     * {@code "beside":CASE}: the program its row names ("CASE vs PROGRAM"), the result field both the engine's and its
     * lines hold, and what it stands for.
     */
    private enum Beside {
        /** bin/tcp_stream: the C stream with the case's memory footprint. */
        FOOTPRINT("footprint", "tcp_stream", "gb_per_s", "C, the engine's memory footprint") {
            @Override
            String text(final double value) {
                return String.format(Locale.ROOT, "%.2f GB/s", value);
            }

            @Override
            String anchor(final JsonNode line, final double median) {
                return footprintText(line) + ": " + text(median);
            }
        },
        /** bin/tcp_pingpong ... split: the C ping-pong over the tcp transport's two one-way connections. */
        TOPOLOGY(
                "topology",
                "tcp_pingpong split",
                "p50_us",
                "C, the engine's topology: two one-way connections, no Java") {
            @Override
            String text(final double value) {
                return us(value) + " p50";
            }

            @Override
            String anchor(final JsonNode line, final double median) {
                return program + ", " + line.path("connections").asInt(1) + " connections: " + us(median)
                        + " round trip";
            }
        };

        final String group;
        final String program;
        final String figure;
        final String meaning;

        Beside(final String group, final String program, final String figure, final String meaning) {
            this.group = group;
            this.program = program;
            this.figure = figure;
            this.meaning = meaning;
        }

        String label(final String name) {
            return name + " vs " + program;
        }

        /** A median or round figure of {@link #figure}, engine's or program's, as the row shows it. */
        abstract String text(double value);

        /** The anchor cell: what the program's {@code line} says it ran, and the median of its runs. */
        abstract String anchor(JsonNode line, double median);
    }

    private final Map<String, List<ReportLine>> cases = new LinkedHashMap<>();
    /** Per kind of C program, its runs per table case they stand beside. */
    private final Map<Beside, Map<String, List<ReportLine>>> besides = new EnumMap<>(Beside.class);

    private final List<String> failures = new ArrayList<>();

    ReportTable(final List<ReportLine> lines) {
        for (final ReportLine line : lines) {
            if (line.group().equals("table")) {
                cases.computeIfAbsent(line.name(), k -> new ArrayList<>()).add(line);
            }
            for (final Beside kind : Beside.values()) {
                if (line.group().equals(kind.group)) {
                    besides.computeIfAbsent(kind, k -> new LinkedHashMap<>())
                            .computeIfAbsent(
                                    Objects.requireNonNullElse(line.beside(), "(no case)"), k -> new ArrayList<>())
                            .add(line);
                }
            }
        }
    }

    /** The anchor figure of {@code line}: its C anchor's, or its baseline's engine GB/s in the same round. */
    private double anchor(final ReportLine line) {
        if (line.baseline() != null) {
            for (final ReportLine other : cases.getOrDefault(line.baseline(), List.of())) {
                if (other.round() == line.round()) {
                    return other.number("gb_per_s");
                }
            }
            return Double.NaN;
        }
        return line.number(anchorKey(line));
    }

    private static String anchorKey(final ReportLine line) {
        if (line.result() == null) {
            return "";
        }
        for (final String key : List.of("anchor_gb_per_s", "anchor_messages_per_s", "anchor_round_trip_us")) {
            if (line.data().has(key)) {
                return key;
            }
        }
        return "";
    }

    /** The engine figure the ratio uses: the counterpart of the anchor's unit. */
    private static String engineKey(final ReportLine line) {
        return switch (anchorKey(line)) {
            case "anchor_messages_per_s" -> "ops_per_s";
            case "anchor_round_trip_us" -> "p50_us";
            case "anchor_gb_per_s" -> "gb_per_s";
            default -> line.imm() ? "p50_us" : line.paged() && line.baseline() == null ? "ops_per_s" : "gb_per_s";
        };
    }

    /** Medians, ratio, goal per case; then the errors of every round that failed. */
    String markdown() {
        final StringBuilder md = new StringBuilder();
        md.append("| case | engine (median) | anchor (median) | ratio | goal | met | rounds: engine / anchor |\n");
        md.append("|---|---|---|---|---|---|---|\n");
        for (final Map.Entry<String, List<ReportLine>> entry : cases.entrySet()) {
            row(md, entry.getKey(), entry.getValue());
            besides.forEach((kind, runs) -> {
                if (runs.containsKey(entry.getKey())) {
                    besideRow(md, kind, entry.getKey(), entry.getValue(), runs.get(entry.getKey()));
                }
            });
        }
        besides.forEach((kind, runs) -> runs.forEach((beside, programRuns) -> {
            if (!cases.containsKey(beside)) {
                besideRow(md, kind, beside, List.of(), programRuns);
            }
        }));
        if (!failures.isEmpty()) {
            md.append("\nRounds without a result:\n\n");
            failures.forEach(failure -> md.append("- ").append(failure).append('\n'));
        }
        md.append("\nHow each case ran (`te-bench write` from the bundle folder, after `--duration D --warmup W`; the"
                + " anchor's command as te-bench ran it):\n\n");
        for (final Map.Entry<String, List<ReportLine>> entry : cases.entrySet()) {
            final ReportLine first = entry.getValue().getFirst();
            md.append("- `")
                    .append(entry.getKey())
                    .append("`: `")
                    .append(options(first.args()))
                    .append('`');
            final ReportLine measured = firstResult(entry.getValue());
            if (measured != null && measured.data().has("anchor_command")) {
                md.append("; `")
                        .append(measured.data().path("anchor_command").asString())
                        .append('`');
            } else if (first.baseline() != null) {
                md.append("; against `").append(first.baseline()).append("` in the same round");
            }
            md.append('\n');
        }
        besides.forEach((kind, runs) -> runs.forEach((beside, programRuns) -> md.append("- `")
                .append(kind.label(beside))
                .append("`: `")
                .append(programRuns.getFirst().args())
                .append("` (")
                .append(kind.meaning)
                .append(") right after `")
                .append(beside)
                .append("` in each round\n")));
        return md.toString();
    }

    /**
     * The row under case {@code name}: its median figure (over all its rounds, as its own row) against the median of
     * the C program's runs beside it, ratio engine / C, and per round the two figures of that round.
     */
    private void besideRow(
            final StringBuilder md,
            final Beside kind,
            final String name,
            final List<ReportLine> engineRounds,
            final List<ReportLine> programRounds) {
        final String label = kind.label(name);
        final List<String> perRound = new ArrayList<>();
        for (final ReportLine run : programRounds) {
            if (run.result() == null) {
                perRound.add(run.failed() != null ? "FAILED" : "skipped");
                failures.add("`" + label + "` round " + run.round() + ": " + cell(why(run)));
                continue;
            }
            double engine = Double.NaN;
            for (final ReportLine line : engineRounds) {
                if (line.round() == run.round()) {
                    engine = line.number(kind.figure);
                }
            }
            perRound.add(number(engine) + " / " + number(run.number(kind.figure)));
        }
        final double engine = median(engineRounds, line -> line.number(kind.figure));
        final double program = median(programRounds, line -> line.number(kind.figure));
        final ReportLine measured = firstResult(programRounds);
        final String anchor = measured == null
                ? kind.program + " **FAILED**: " + cell(abbreviate(why(programRounds.getFirst())))
                : kind.anchor(measured.data(), program);
        final double ratio = engine / program;
        md.append("| ")
                .append(label)
                .append(" | ")
                .append(Double.isNaN(engine) ? "—" : kind.text(engine))
                .append(" | ")
                .append(anchor)
                .append(" | ")
                .append(Double.isNaN(ratio) ? "—" : String.format(Locale.ROOT, "%.2f", ratio))
                .append(" | — | — | ")
                .append(String.join(", ", perRound))
                .append(" |\n");
    }

    /** What tcp_stream's line says it streamed through: its region, pages, huge pages and connections. */
    private static String footprintText(final JsonNode stream) {
        final long page = stream.path("page").asLong();
        final int streams = stream.path("streams").asInt(1);
        return "tcp_stream " + stream.path("region_mib").asLong() + " MiB"
                + (page == 0 ? "" : page % 1024 == 0 ? ", " + page / 1024 + " KiB pages" : ", " + page + " B pages")
                + (stream.path("huge").asInt() == 1 ? ", huge pages" : "")
                + (streams == 1 ? ", one stream" : ", " + streams + " streams");
    }

    /** Why a round has no result: its error, or why it was skipped. */
    private static String why(final ReportLine line) {
        return line.failed() != null ? line.failed() : "skipped: " + line.skipped();
    }

    private void row(final StringBuilder md, final String name, final List<ReportLine> rounds) {
        final ReportLine measured = firstResult(rounds);
        final List<String> perRound = new ArrayList<>();
        for (final ReportLine line : rounds) {
            perRound.add(roundText(line));
            if (line.failed() != null || line.skipped() != null) {
                failures.add("`" + name + "` round " + line.round() + ": " + cell(why(line)));
            }
        }
        if (measured == null) {
            md.append("| ")
                    .append(name)
                    .append(" | **FAILED**: ")
                    .append(cell(abbreviate(why(rounds.getFirst()))))
                    .append(" | — | — | — | **FAILED** | ")
                    .append(String.join(", ", perRound))
                    .append(" |\n");
            return;
        }
        final String engineKey = engineKey(measured);
        final double engine = median(rounds, line -> line.number(engineKey));
        final double anchor = median(rounds, this::anchor);
        final double ratio = engine / anchor;
        final String goal = measured.goal() != null
                ? measured.goal()
                : measured.data().path("goal").asString("");
        md.append("| ")
                .append(name)
                .append(" | ")
                .append(engineText(measured, rounds))
                .append(" | ")
                .append(anchorText(measured, anchor))
                .append(" | ")
                .append(Double.isNaN(ratio) ? "—" : String.format(Locale.ROOT, "%.2f", ratio))
                .append(" | ")
                .append(goal.isEmpty() ? "—" : goal)
                .append(" | ")
                .append(met(goal, ratio))
                .append(" | ")
                .append(String.join(", ", perRound))
                .append(" |\n");
    }

    private String roundText(final ReportLine line) {
        if (line.failed() != null) {
            return "FAILED";
        }
        if (line.skipped() != null) {
            return "skipped";
        }
        final double anchor = anchor(line);
        final String engine = number(line.number(engineKey(line)));
        final String text = Double.isNaN(anchor)
                ? engine + (line.data().has("anchor_error") ? " / anchor failed" : "")
                : engine + " / " + number(anchor);
        final long errors = (long) line.number("errors");
        return errors > 0 ? text + " (" + errors + " requests failed)" : text;
    }

    private static String engineText(final ReportLine measured, final List<ReportLine> rounds) {
        if (measured.imm()) {
            return us(median(rounds, line -> line.number("p50_us"))) + " p50 (p99 "
                    + us(median(rounds, line -> line.number("p99_us"))) + ")";
        }
        final String gb = String.format(Locale.ROOT, "%.2f GB/s", median(rounds, line -> line.number("gb_per_s")))
                + hugePagesText(rounds);
        if (measured.paged()) {
            return String.format(Locale.ROOT, "%.3f M pages/s", median(rounds, line -> line.number("ops_per_s")) / 1e6)
                    + " (" + gb + ")";
        }
        return gb;
    }

    /**
     * For a case run with {@code --huge-pages}: the least over its rounds of the bytes huge pages backed in each
     * region ({@code huge_pages_bytes}), the proof that they did; nothing for other cases.
     */
    private static String hugePagesText(final List<ReportLine> rounds) {
        final List<String> regions = new ArrayList<>();
        for (final String region : List.of("source", "target")) {
            final double least = rounds.stream()
                    .filter(line -> line.data().path("huge_pages_bytes").has(region))
                    .mapToDouble(line ->
                            line.data().path("huge_pages_bytes").path(region).asDouble())
                    .min()
                    .orElse(Double.NaN);
            if (!Double.isNaN(least)) {
                regions.add(region + " " + String.format(Locale.ROOT, "%.0f MiB", least / (1 << 20)));
            }
        }
        return regions.isEmpty() ? "" : "; huge pages back " + String.join(", ", regions);
    }

    private static String anchorText(final ReportLine measured, final double anchor) {
        if (measured.baseline() != null) {
            return "`" + measured.baseline() + "`: "
                    + (Double.isNaN(anchor) ? "no result" : String.format(Locale.ROOT, "%.2f GB/s", anchor));
        }
        final String name = measured.data().path("anchor").asString("none");
        if (Double.isNaN(anchor)) {
            return name.equals("failed")
                    ? "failed: "
                            + cell(abbreviate(
                                    measured.data().path("anchor_error").asString()))
                    : name;
        }
        return switch (anchorKey(measured)) {
            case "anchor_round_trip_us" -> name + " " + us(anchor) + " round trip";
            case "anchor_messages_per_s" ->
                name + " -S " + measured.data().path("size").asLong() + ": "
                        + String.format(Locale.ROOT, "%.3f M msgs/s", anchor / 1e6);
            default -> {
                final String command = measured.data().path("anchor_command").asString();
                final int streams = command.indexOf(" -P ");
                final String streamsText =
                        streams >= 0 ? command.substring(streams) : name.equals("iperf3") ? " one stream" : "";
                yield name + streamsText + ": " + String.format(Locale.ROOT, "%.2f GB/s", anchor);
            }
        };
    }

    private static String met(final String goal, final double ratio) {
        final String[] parts = goal.split(" ", -1);
        if (parts.length != 3 || Double.isNaN(ratio)) {
            return "—";
        }
        final double bound = Double.parseDouble(parts[2]);
        final boolean met = parts[1].equals(">=") ? ratio >= bound : ratio <= bound;
        return met ? "yes" : "**no**";
    }

    private static @Nullable ReportLine firstResult(final List<ReportLine> rounds) {
        for (final ReportLine line : rounds) {
            if (line.result() != null) {
                return line;
            }
        }
        return null;
    }

    /** The median of the figures that exist (NaN where none does). */
    private static double median(final List<ReportLine> rounds, final ToDoubleFunction<ReportLine> figure) {
        final double[] values = rounds.stream()
                .filter(line -> line.result() != null)
                .mapToDouble(figure)
                .filter(value -> !Double.isNaN(value))
                .sorted()
                .toArray();
        if (values.length == 0) {
            return Double.NaN;
        }
        final int middle = values.length / 2;
        return values.length % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
    }

    /** The medians of p50, p99 and the anchor's round trip per imm case, for the latency plot. */
    Map<String, double[]> latencies() {
        final Map<String, double[]> out = new LinkedHashMap<>();
        cases.forEach((name, rounds) -> {
            final ReportLine measured = firstResult(rounds);
            if (measured != null && measured.imm()) {
                out.put(name, new double[] {
                    median(rounds, line -> line.number("p50_us")),
                    median(rounds, line -> line.number("p99_us")),
                    median(rounds, this::anchor)
                });
            }
        });
        return out;
    }

    /** The median M pages/s per paged case, for the pages plot. */
    Map<String, Double> pages() {
        final Map<String, Double> out = new LinkedHashMap<>();
        cases.forEach((name, rounds) -> {
            final ReportLine measured = firstResult(rounds);
            if (measured != null && measured.paged()) {
                out.put(name, Math.round(median(rounds, line -> line.number("ops_per_s")) / 1e4) / 100.0);
            }
        });
        return out;
    }

    /** te-bench's arguments without the run length (the same for every case) and with paths as given. */
    static String options(final String args) {
        return args.replaceAll("--duration \\S+ --warmup \\S+", "")
                .replaceAll("\\s+", " ")
                .strip();
    }

    private static String number(final double value) {
        if (Double.isNaN(value)) {
            return "—";
        }
        if (value >= 1e5) {
            return String.format(Locale.ROOT, "%.3f M", value / 1e6);
        }
        return String.format(Locale.ROOT, value >= 100 ? "%.1f" : "%.2f", value);
    }

    private static String us(final double value) {
        return String.format(Locale.ROOT, value >= 100 ? "%.0f us" : "%.2f us", value);
    }

    private static String abbreviate(final String text) {
        return text.length() <= 160 ? text : text.substring(0, 160) + " ...";
    }

    /** Text that may hold a table cell: no pipes, no line breaks. */
    static String cell(final String text) {
        return text.replace("|", "\\|").replace('\n', ' ');
    }
}
