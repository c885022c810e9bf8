package dev.nixl4j.metadata;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;

/**
 * The check every {@link MetadataExchange} applies to a value it fetched, before the
 * value can reach an agent: a size cap, NIXL's framing, and the agent name it must carry.
 */
public final class MetadataValues {

	/** The default cap on a metadata value: 16 MiB (NIXL's blobs are kilobytes). */
	public static final int DEFAULT_MAX_BYTES = 16 << 20;

	private MetadataValues() {
	}

	/**
	 * Checks a fetched value.
	 * @param operation the operation, for the error (for example {@code fetch_remote_md})
	 * @param expectedAgent the agent the value was fetched for
	 * @param value the bytes
	 * @param maxBytes the largest value accepted
	 * @return the metadata
	 * @throws NixlException {@link NixlStatus#INVALID_METADATA} naming what was wrong
	 * (never the bytes)
	 */
	public static AgentMetadata check(String operation, String expectedAgent, byte[] value, int maxBytes) {
		if (value.length > maxBytes) {
			throw new NixlException(NixlStatus.INVALID_METADATA, operation, null, expectedAgent,
					"the value is " + value.length + " bytes, over the limit of " + maxBytes + " bytes");
		}
		MetadataFraming.ParsedMetadata parsed;
		try {
			parsed = MetadataFraming.parse(value, maxBytes);
		}
		catch (NixlException ex) {
			throw new NixlException(NixlStatus.INVALID_METADATA, operation, null, expectedAgent,
					"the value is not NIXL agent metadata: " + ex.getMessage(), ex);
		}
		if (!parsed.agentName().equals(expectedAgent)) {
			throw new NixlException(NixlStatus.INVALID_METADATA, operation, null, expectedAgent,
					"the value describes agent '" + parsed.agentName() + "', not the agent asked for");
		}
		return AgentMetadata.of(value);
	}

}
