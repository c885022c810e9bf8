package dev.nixl4j.metadata.http;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The owner secrets of the entries an {@link HttpMetadataExchange} created at its
 * registry, by agent name, kept in memory only. Callers hold this object's monitor around
 * a request that sends or changes a secret, so a renewal never races a republish with
 * another secret.
 */
final class OwnerSecrets {

	/** Guarded by this object's monitor. */
	private final Map<String, Ownership> owned = new LinkedHashMap<>();

	@Nullable Ownership get(String agentName) {
		return this.owned.get(agentName);
	}

	void put(String agentName, Ownership ownership) {
		this.owned.put(agentName, ownership);
	}

	void remove(String agentName) {
		this.owned.remove(agentName);
	}

	List<String> agentNames() {
		return List.copyOf(this.owned.keySet());
	}

	@Override
	public String toString() {
		return "OwnerSecrets[" + this.owned.size() + " entries, secrets hidden]";
	}

	/**
	 * The exchange's hold on one entry: its owner secret, whether renewing it fails now,
	 * and whether a withdrawal of it was asked for (then it is renewed no more).
	 */
	static final class Ownership {

		final String secret;

		boolean failing;

		boolean withdrawn;

		Ownership(String secret) {
			this.secret = secret;
		}

		@Override
		public String toString() {
			return "Ownership[secret hidden]";
		}

	}

}
