package dev.nixl4j.micrometer;

import dev.nixl4j.NixlException;
import io.micrometer.common.KeyValues;

/**
 * The default names of metadata exchange observations: {@code nixl.metadata}, contextual
 * name {@code nixl metadata fetch} or {@code nixl metadata load}.
 *
 * <p>
 * Low-cardinality keys: {@code operation} ({@code fetch}, {@code load}) and
 * {@code status} ({@code success}, or the failure's {@link dev.nixl4j.NixlStatus} in
 * lower case, such as {@code timeout} or {@code unavailable}, or {@code error} for other
 * exceptions). High-cardinality key: {@code remote.agent}.
 */
public class DefaultMetadataObservationConvention implements MetadataObservationConvention {

	/** The observation name. */
	public static final String NAME = "nixl.metadata";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(MetadataObservationContext context) {
		return "nixl metadata " + NixlAgentMetrics.tagValue(context.getOperation());
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(MetadataObservationContext context) {
		return KeyValues.of("operation", NixlAgentMetrics.tagValue(context.getOperation()), "status", status(context));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(MetadataObservationContext context) {
		return KeyValues.of("remote.agent", context.getRemoteAgent());
	}

	private static String status(MetadataObservationContext context) {
		Throwable error = context.getError();
		if (error == null) {
			return "success";
		}
		return (error instanceof NixlException nixl) ? NixlAgentMetrics.tagValue(nixl.status()) : "error";
	}

}
