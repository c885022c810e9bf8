package dev.nixl4j.metadata.etcd;

/**
 * NIXL's key layout in etcd, as NIXL 1.5.1 makes its keys, with nixl4j's documents beside
 * them. See "Metadata exchange in etcd" in {@code docs/architecture.md}.
 */
final class EtcdKeys {

	private final String namespace;

	EtcdKeys(String namespace) {
		this.namespace = namespace;
	}

	String namespace() {
		return this.namespace;
	}

	/**
	 * Returns the prefix of every key of an agent, itself the empty anchor key that
	 * NIXL's watchers watch: NIXL joins namespace and agent with a {@code '/'} even when
	 * the namespace ends with one.
	 * @param agentName the agent
	 * @return {@code <namespace>/<agent>/}
	 */
	String agentPrefix(String agentName) {
		return this.namespace + "/" + agentName + "/";
	}

	/**
	 * Returns the key of an agent's metadata.
	 * @param agentName the agent
	 * @return {@code <namespace>/<agent>/metadata}
	 */
	String metadata(String agentName) {
		return agentPrefix(agentName) + EtcdMetadataExchange.METADATA_LABEL;
	}

	/**
	 * Returns the key of an agent's document of a kind.
	 * @param agentName the agent
	 * @param kind the document's kind
	 * @return {@code <namespace>/<agent>/nixl4j-<kind>}
	 */
	String document(String agentName, String kind) {
		return agentPrefix(agentName) + EtcdMetadataExchange.DOCUMENT_LABEL_PREFIX + kind;
	}

}
