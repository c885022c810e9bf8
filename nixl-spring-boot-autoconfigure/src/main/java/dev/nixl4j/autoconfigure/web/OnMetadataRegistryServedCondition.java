package dev.nixl4j.autoconfigure.web;

import dev.nixl4j.autoconfigure.NixlProperties;

import org.springframework.boot.autoconfigure.condition.ConditionMessage;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when this application serves the HTTP metadata registry:
 * {@link NixlProperties.Http#serves()} of the bound {@code nixl.metadata.http.*}
 * properties ({@code serve}, or by default the absence of an {@code endpoint}).
 */
class OnMetadataRegistryServedCondition extends SpringBootCondition {

	private static final String PREFIX = "nixl.metadata.http";

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		ConditionMessage.Builder message = ConditionMessage.forCondition("NIXL metadata registry served");
		NixlProperties.Http http;
		try {
			http = Binder.get(context.getEnvironment())
				.bind(PREFIX, NixlProperties.Http.class)
				.orElseGet(NixlProperties.Http::new);
		}
		catch (BindException ex) {
			// the nixl properties themselves fail to bind and report it
			return ConditionOutcome.noMatch(message.because(PREFIX + ".* cannot be bound"));
		}
		if (http.serves()) {
			return ConditionOutcome.match(message.because((http.getServe() != null) ? PREFIX + ".serve is true"
					: "no " + PREFIX + ".endpoint is set: this application is the registry"));
		}
		return ConditionOutcome.noMatch(message.because((http.getServe() != null) ? PREFIX + ".serve is false"
				: PREFIX + ".endpoint is set: the registry is elsewhere"));
	}

}
