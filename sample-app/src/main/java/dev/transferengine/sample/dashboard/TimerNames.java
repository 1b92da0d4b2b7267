package dev.transferengine.sample.dashboard;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;

/**
 * Names of timers for people: {@code transferEngine: paged-write latency (to tcp://127.0.0.1)} instead of
 * {@code transfer.engine.latency{engine=transferEngine,kind=paged-write,outcome=success,peer=tcp://127.0.0.1}}.
 */
final class TimerNames {

    private static final Map<String, String> KNOWN = Map.of(
            "sample.kv.layer.write", "KV: one layer's paged write, submit to completion",
            "sample.kv.transfer.exposed", "KV: exposed transfer time (last layer computed to its writes done)",
            "sample.moe.dispatch", "MoE: dispatch of one layer",
            "sample.moe.combine", "MoE: combine of one layer",
            "sample.moe.layer", "MoE: one layer, dispatch to combined output",
            "transfer.engine.latency", "latency",
            "transfer.engine.transfer", "reactive transfer");

    /** Tags whose usual value says nothing: a name shows them only when they differ. */
    private static final Map<String, String> UNREMARKABLE = Map.of("outcome", "success", "error", "none");

    /** Tags the engine already implies. */
    private static final Set<String> IMPLIED = Set.of("transport", "routing");

    private TimerNames() {}

    /**
     * The readable name of a timer.
     *
     * @param id the timer's id
     * @return {@code engine: kind what (details)}, each part only where the timer has it
     */
    static String readable(final Meter.Id id) {
        final String what = KNOWN.getOrDefault(id.getName(), id.getName());
        final String engine = id.getTag("engine");
        final String kind = id.getTag("kind");
        final List<String> details = new ArrayList<>();
        for (final Tag tag : id.getTags()) {
            final String key = tag.getKey();
            final String value = tag.getValue();
            if (key.equals("engine") || key.equals("kind") || IMPLIED.contains(key)) {
                continue;
            }
            if (value.equals(UNREMARKABLE.get(key))) {
                continue;
            }
            details.add(key.equals("peer") ? "to " + value : key + " " + value);
        }
        return (engine == null ? "" : engine + ": ")
                + (kind == null ? "" : kind + " ")
                + what
                + (details.isEmpty() ? "" : " (" + String.join(", ", details) + ")");
    }

    /**
     * The Micrometer form, {@code name{key=value,...}}, as a tooltip.
     *
     * @param id the timer's id
     * @return its name and tags
     */
    static String meter(final Meter.Id id) {
        final List<Tag> tags = id.getTags();
        if (tags.isEmpty()) {
            return id.getName();
        }
        final StringBuilder name = new StringBuilder(id.getName()).append('{');
        for (int i = 0; i < tags.size(); i++) {
            name.append(i == 0 ? "" : ",")
                    .append(tags.get(i).getKey())
                    .append('=')
                    .append(tags.get(i).getValue());
        }
        return name.append('}').toString();
    }
}
