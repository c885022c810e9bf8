package dev.nixl4j.metadata.http;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import dev.nixl4j.metadata.http.MetadataRegistryHandler.Response;

/**
 * The refusals a {@link MetadataRegistryHandler} answers with a plain-text reason.
 */
final class RegistryAnswers {

	private RegistryAnswers() {
	}

	static Response notOwner(String agentName) {
		return text(403, "the entry of agent '" + agentName + "' belongs to another owner; only the request carrying "
				+ "its owner secret (" + MetadataRegistryHandler.OWNER_SECRET_HEADER + ") may change it");
	}

	static Response overQuota(String reason) {
		return text(429, reason + "; try again when its entries expire or are deleted");
	}

	static Response full(String reason) {
		return text(507, reason + "; try again when entries expire or are deleted");
	}

	static Response text(int status, String reason) {
		return Response.of(status, Map.of("Content-Type", "text/plain; charset=utf-8"),
				reason.getBytes(StandardCharsets.UTF_8));
	}

}
