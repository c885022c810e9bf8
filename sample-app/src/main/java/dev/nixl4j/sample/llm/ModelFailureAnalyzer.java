package dev.nixl4j.sample.llm;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a {@link ModelStartException} in Spring Boot's start-up failure report: what
 * is wrong and what to do, without a stack trace.
 */
class ModelFailureAnalyzer extends AbstractFailureAnalyzer<ModelStartException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, ModelStartException cause) {
		return new FailureAnalysis(String.valueOf(cause.getMessage()), cause.action(), cause);
	}

}
