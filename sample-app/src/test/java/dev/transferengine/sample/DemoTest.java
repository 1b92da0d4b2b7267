package dev.transferengine.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/** The default role: a prefill and a decode in one process, transferring on their own. */
class DemoTest {

    private static final Pattern BYTES_OUT =
        Pattern.compile("transfer_engine_bytes_total\\{direction=\"out\",engine=\"transferEngine\",nic=\"0\\.0\"} ([0-9.E]+)");

    @Test
    void transfersContinuouslyAndShowsItInHealthAndMetrics() {
        try (SampleNode demo = SampleNode.start(Role.DEMO, "sample.demo.interval=200ms", "sample.demo.tokens=64")) {
            final double first = await().atMost(Duration.ofMinutes(1)).until(() -> bytesOut(demo), bytes -> bytes > 0);
            await().atMost(Duration.ofMinutes(1)).until(() -> bytesOut(demo), bytes -> bytes > first);

            demo.client().get().uri("/actuator/health").exchange()
                .expectStatus().isOk()
                .expectBody()
                .jsonPath("$.status").isEqualTo("UP")
                .jsonPath("$.components.transferEngine.status").isEqualTo("UP");
            demo.client().get().uri("/actuator/transferengine").exchange()
                .expectStatus().isOk()
                .expectBody(String.class).value(body -> assertThat(body).contains("tcp"));
        }
    }

    private static double bytesOut(final SampleNode node) {
        final String body = node.client().get().uri("/actuator/prometheus").exchange()
            .expectStatus().isOk()
            .expectBody(String.class).returnResult().getResponseBody();
        final Matcher matcher = BYTES_OUT.matcher(body == null ? "" : body);
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
    }
}
