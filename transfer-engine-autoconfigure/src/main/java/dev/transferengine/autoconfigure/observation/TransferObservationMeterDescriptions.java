package dev.transferengine.autoconfigure.observation;

import java.util.Map;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;

/**
 * Gives the meters Micrometer's observation handler makes of {@code transfer.engine.transfer} a description (the
 * Prometheus HELP text), which the handler itself never sets. A description set elsewhere stays.
 */
final class TransferObservationMeterDescriptions implements MeterFilter {

    private static final Map<String, String> DESCRIPTIONS = Map.of(
            DefaultTransferObservationConvention.NAME,
            "Reactive transfers of the engine's facade, from subscription to the end of the Mono (writes, sends, imm"
                    + " waits), by engine, kind, transport, routing and outcome",
            DefaultTransferObservationConvention.NAME + ".active",
            "Reactive transfers of the engine's facade that were subscribed to and have not ended");

    @Override
    public Meter.Id map(final Meter.Id id) {
        final String description = DESCRIPTIONS.get(id.getName());
        if (description == null || id.getDescription() != null) {
            return id;
        }
        return new Meter.Id(
                id.getName(),
                io.micrometer.core.instrument.Tags.of(id.getTags()),
                id.getBaseUnit(),
                description,
                id.getType());
    }
}
