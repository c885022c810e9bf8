package dev.nixl4j.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and key values of transfer observations. Define a bean of this type to replace
 * {@link DefaultTransferObservationConvention}.
 */
public interface TransferObservationConvention extends ObservationConvention<TransferObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof TransferObservationContext;
	}

}
