package dev.transferengine.sample.dashboard;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Timer rows for people: what is measured and whose it is; the Micrometer id stays as a tooltip. */
class TimerNamesTest {

    @Test
    void theEngineLatencyTimerReadsAsEngineKindAndPeer() {
        final Meter.Id id = id(
                "transfer.engine.latency",
                Tags.of(
                        "engine",
                        "transferEngine",
                        "kind",
                        "paged-write",
                        "outcome",
                        "success",
                        "peer",
                        "tcp://10.0.0.2"));
        assertThat(TimerNames.readable(id)).isEqualTo("transferEngine: paged-write latency (to tcp://10.0.0.2)");
        assertThat(TimerNames.meter(id))
                .isEqualTo("transfer.engine.latency{engine=transferEngine,kind=paged-write,outcome=success,"
                        + "peer=tcp://10.0.0.2}");
    }

    @Test
    void failuresAndErrorsShowOnlyWhenTheyDifferFromTheUsual() {
        assertThat(TimerNames.readable(id(
                        "transfer.engine.transfer",
                        Tags.of(
                                "engine",
                                "decodeEngine",
                                "kind",
                                "imm-wait",
                                "transport",
                                "tcp",
                                "routing",
                                "none",
                                "outcome",
                                "failure",
                                "error",
                                "TransferTimeoutException"))))
                .isEqualTo(
                        "decodeEngine: imm-wait reactive transfer (error TransferTimeoutException, outcome failure)");
    }

    @Test
    void theSampleTimersSayWhatTheyMeasureAndUnknownOnesKeepTheirName() {
        assertThat(TimerNames.readable(id("sample.kv.layer.write", Tags.empty())))
                .isEqualTo("KV: one layer's paged write, submit to completion");
        assertThat(TimerNames.readable(id("sample.moe.dispatch", Tags.empty())))
                .isEqualTo("MoE: dispatch of one layer");
        assertThat(TimerNames.readable(id("http.server.requests", Tags.of("uri", "/kv/transfer"))))
                .isEqualTo("http.server.requests (uri /kv/transfer)");
    }

    private static Meter.Id id(final String name, final Tags tags) {
        return new Meter.Id(name, tags, null, null, Meter.Type.TIMER);
    }
}
