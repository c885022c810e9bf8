package dev.nixl4j.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and key values of metadata exchange observations. Define a bean of this type to
 * replace {@link DefaultMetadataObservationConvention}.
 */
public interface MetadataObservationConvention extends ObservationConvention<MetadataObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof MetadataObservationContext;
	}

}
