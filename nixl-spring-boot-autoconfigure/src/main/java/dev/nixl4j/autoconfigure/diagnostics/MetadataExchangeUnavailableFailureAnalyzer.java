package dev.nixl4j.autoconfigure.diagnostics;

import dev.nixl4j.autoconfigure.MetadataExchangeUnavailableException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a {@link MetadataExchangeUnavailableException}: the metadata exchange that the
 * configuration names could not be reached at start.
 */
class MetadataExchangeUnavailableFailureAnalyzer extends AbstractFailureAnalyzer<MetadataExchangeUnavailableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, MetadataExchangeUnavailableException cause) {
		return new FailureAnalysis(
				"The NIXL agent could not publish its metadata at start: the metadata exchange at " + cause.property()
						+ "=" + cause.value() + " could not be reached (" + cause.exchangeFailure().status() + ": "
						+ cause.exchangeFailure().getMessage() + ").",
				"Start the metadata exchange there, or point " + cause.property()
						+ " at a running one. To start without publishing, set nixl.metadata.publish=false.",
				cause);
	}

}
