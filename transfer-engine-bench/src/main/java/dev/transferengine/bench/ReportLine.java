package dev.transferengine.bench;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.MissingNode;

/**
 * One case line of report.sh's {@code report.jsonl}: a case of a group (the table, the negative acknowledgements,
 * stages, the sweep) in one round, with its te-bench result, or why it has none ({@code failed}: its error;
 * {@code skipped}: the time budget). Table rows measured against another case instead of a C anchor (TLS against
 * plain) name it as {@code baseline}, with their own {@code goal}. A C program run right after a case names that case as
 * {@code beside}, its result the program's line: the stream with the case's memory footprint ({@code bin/tcp_stream},
 * group {@code footprint}) or the ping-pong over two one-way connections ({@code bin/tcp_pingpong ... split}, group
 * {@code topology}).
 *
 * @param name     the case
 * @param group    {@code table}, {@code nack}, {@code stages}, {@code sweep-...}
 * @param round    1, 2, ... (the rounds run every case in turn)
 * @param args     te-bench's arguments, paths relative to the bundle
 * @param result   te-bench's JSON line, or the benchmark's figures
 * @param failed   the error of a case that ended without a result
 * @param skipped  why a case did not run
 * @param baseline the case this one is compared with, in the same round
 * @param goal     the goal of a baseline comparison, e.g. {@code ratio >= 0.5}
 * @param beside   the table case a {@code footprint} or {@code topology} line is held against, in the same round
 */
record ReportLine(
        String name,
        String group,
        int round,
        String args,
        @Nullable JsonNode result,
        @Nullable String failed,
        @Nullable String skipped,
        @Nullable String baseline,
        @Nullable String goal,
        @Nullable String beside) {

    static ReportLine of(final JsonNode node) {
        return new ReportLine(
                node.path("case").asString(),
                node.path("group").asString(),
                node.path("round").asInt(1),
                node.path("args").asString(),
                node.get("result"),
                text(node, "failed"),
                text(node, "skipped"),
                text(node, "baseline"),
                text(node, "goal"),
                text(node, "beside"));
    }

    private static @Nullable String text(final JsonNode node, final String key) {
        return node.has(key) ? node.get(key).asString() : null;
    }

    /** The result, or a missing node (whose fields are all missing) where there is none. */
    JsonNode data() {
        return result != null ? result : MissingNode.getInstance();
    }

    String op() {
        return data().path("op").asString();
    }

    boolean imm() {
        return op().equals("imm");
    }

    boolean paged() {
        return op().startsWith("paged");
    }

    /** A result field, or NaN where the line has no result or no such field. */
    double number(final String key) {
        return data().has(key) ? data().get(key).asDouble() : Double.NaN;
    }
}
