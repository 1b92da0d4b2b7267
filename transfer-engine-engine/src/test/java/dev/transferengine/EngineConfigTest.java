package dev.transferengine;

import dev.transferengine.exceptions.InvalidConfigException;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The config records are the one source of the rules, and name the setting a front end must report. */
class EngineConfigTest {

    @Test
    void anOutOfRangeSettingIsNamedWithItsValue() {
        assertThatThrownBy(
                        () -> TransferEngine.builder().submitQueueCapacity(1000).config())
                .isInstanceOfSatisfying(InvalidConfigException.class, e -> {
                    assertThat(e.setting()).isEqualTo("submitQueueCapacity");
                    assertThat(e.value()).isEqualTo(1000);
                })
                .hasMessageContaining("power of two");
        assertThatThrownBy(() ->
                        TransferEngine.builder().operationTimeout(Duration.ZERO).config())
                .isInstanceOfSatisfying(InvalidConfigException.class, e -> assertThat(e.setting())
                        .isEqualTo("operationTimeout"));
        assertThatThrownBy(() -> TransferEngine.builder().maxUnexpectedImms(-1).config())
                .isInstanceOfSatisfying(InvalidConfigException.class, e -> assertThat(e.setting())
                        .isEqualTo("maxUnexpectedImms"));
    }

    @Test
    void groupSettingsAreCheckedWhereTheGroupIsMade() {
        assertThatThrownBy(() -> GroupSpec.of(5))
                .isInstanceOfSatisfying(InvalidConfigException.class, e -> assertThat(e.setting())
                        .isEqualTo("nics"));
        assertThatThrownBy(() -> GroupSpec.of(1).withWorkerCpu(-1))
                .isInstanceOfSatisfying(InvalidConfigException.class, e -> assertThat(e.setting())
                        .isEqualTo("workerCpu"));
    }

    @Test
    void toStringRedactsTheClusterKey() {
        final String key = "k3y-that-must-never-be-logged-0123456789";
        final String shown = TransferEngine.builder()
                .option("tcp.clusterKey", key)
                .option("tcp.clusterKeyFile", "/etc/te/cluster.key")
                .config()
                .toString();

        assertThat(shown)
                .doesNotContain(key)
                .contains("tcp.clusterKey=<redacted>")
                .contains("tcp.clusterKeyFile=/etc/te/cluster.key");
    }
}
