package dev.transferengine.autoconfigure.observation;

import dev.transferengine.NetworkAddress;

import io.micrometer.common.KeyValues;

/**
 * Observations named {@code transfer.engine.transfer} (contextual name {@code transfer-engine <kind>}), with the
 * low-cardinality keys {@code engine} (the engine's bean name), {@code kind}, {@code transport}, {@code routing} and
 * {@code outcome} and the high-cardinality
 * key {@code peer} (the readable address, {@code group} for scatter and barrier, {@code none} for an imm wait).
 */
public class DefaultTransferObservationConvention implements TransferObservationConvention {

    /** The observation's name; with Micrometer's meter handler also a timer {@code transfer.engine.transfer}. */
    public static final String NAME = "transfer.engine.transfer";

    /** The convention as documented above; subclass it to add or change keys. */
    public DefaultTransferObservationConvention() {
        // stateless: every key is computed from the context
    }

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(final TransferObservationContext context) {
        return "transfer-engine " + context.transfer().kind();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(final TransferObservationContext context) {
        return KeyValues.of(
                "engine",
                context.engine(),
                "kind",
                context.transfer().kind(),
                "transport",
                context.transfer().transport(),
                "routing",
                context.transfer().routing(),
                "outcome",
                context.outcome());
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(final TransferObservationContext context) {
        final NetworkAddress peer = context.transfer().peer();
        final String value =
                peer != null ? peer.describe() : context.transfer().kind().equals("imm-wait") ? "none" : "group";
        return KeyValues.of("peer", value);
    }
}
