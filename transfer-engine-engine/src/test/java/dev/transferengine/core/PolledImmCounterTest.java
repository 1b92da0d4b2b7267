package dev.transferengine.core;

import dev.transferengine.exceptions.TransferTimeoutException;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PolledImmCounterTest {

    @Test
    void tryAwaitAnswersFalseOnTimeoutAndGivesTheCreditsBack() {
        final PolledImmCounter counter = new PolledImmCounter(7, 1);

        assertThat(counter.tryAwait(3, Duration.ofMillis(1))).isFalse();
        assertThat(counter.balance()).as("the credits taken are given back").isEqualTo(1);

        counter.credit(1);
        counter.credit(1);
        assertThat(counter.tryAwait(3, Duration.ofMillis(1))).isTrue();
        assertThat(counter.balance()).isZero();
    }

    @Test
    void awaitWithATimeoutStillThrowsNamingTheShortfall() {
        final PolledImmCounter counter = new PolledImmCounter(7, 1);

        assertThatThrownBy(() -> counter.await(3, Duration.ofMillis(1)))
                .isInstanceOf(TransferTimeoutException.class)
                .hasMessageContaining("imm 7")
                .hasMessageContaining("balance -2");
        assertThat(counter.balance()).isEqualTo(1);
    }
}
