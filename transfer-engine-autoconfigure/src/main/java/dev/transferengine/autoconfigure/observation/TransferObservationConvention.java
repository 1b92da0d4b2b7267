package dev.transferengine.autoconfigure.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and tags the transfer observations; declare a bean of this type to replace
 * {@link DefaultTransferObservationConvention}.
 */
public interface TransferObservationConvention extends ObservationConvention<TransferObservationContext> {

    @Override
    default boolean supportsContext(final Observation.Context context) {
        return context instanceof TransferObservationContext;
    }
}
