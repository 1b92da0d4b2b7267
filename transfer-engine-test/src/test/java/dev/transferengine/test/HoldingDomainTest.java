package dev.transferengine.test;

import dev.transferengine.TransferEngine;
import dev.transferengine.TransportEvent;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HoldingDomainTest {

    /** The holding domain passes on what the wrapped domain counts: tcp counts handshakes, refusals and closes. */
    @Test
    void transportEventsAreThoseOfTheWrappedDomain() {
        try (TransferEngine plain = TransferEngine.builder().transport("tcp").build();
                TransferEngine holding = TransferEngine.builder()
                        .transport(HoldingTransport.NAME)
                        .option(HoldingTransport.WRAPPED, "tcp")
                        .build()) {
            final List<String> expected = categories(plain.transportEvents());
            assertThat(expected).isNotEmpty();
            assertThat(categories(holding.transportEvents())).isEqualTo(expected);
        }
    }

    private static List<String> categories(final List<TransportEvent> events) {
        return events.stream().map(e -> e.category() + "/" + e.reason()).toList();
    }
}
