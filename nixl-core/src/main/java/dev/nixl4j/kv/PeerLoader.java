package dev.nixl4j.kv;

import java.time.Duration;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataExchange;

/**
 * Makes sure an agent holds a peer's NIXL metadata before a transfer to it or a notification to
 * it. {@link KvProducer} needs it to answer consumers it has never seen; {@link KvConsumer} to
 * reach a producer named by a {@link RemoteCacheHandle}.
 */
@FunctionalInterface
public interface PeerLoader {

	/**
	 * Loads a peer's metadata into the agent unless it is loaded already.
	 * @param agent the local agent
	 * @param peer the peer's agent name
	 * @param timeout how long to wait for the peer's metadata
	 * @throws NixlException when it cannot be loaded in time
	 */
	void load(NixlAgent agent, String peer, Duration timeout);

	/**
	 * Loads peers through a metadata exchange ({@link MetadataExchange#load}), which also makes
	 * the agent forget a peer that disappears from the exchange.
	 * @param exchange the exchange
	 * @return the loader
	 */
	static PeerLoader of(MetadataExchange exchange) {
		Object lock = new Object();
		return (agent, peer, timeout) -> {
			// one load at a time: two threads loading the same peer would load it twice
			synchronized (lock) {
				if (!agent.hasRemoteMetadata(peer)) {
					exchange.load(agent, peer, timeout);
				}
			}
		};
	}

	/**
	 * A loader for agents that received every peer's metadata some other way: it only checks.
	 * @return the loader
	 */
	static PeerLoader preloaded() {
		return (agent, peer, timeout) -> {
			if (!agent.hasRemoteMetadata(peer)) {
				throw new NixlException(NixlStatus.ERROR_NOT_FOUND, "load_remote_md", agent.name(), peer,
						"the metadata of '" + peer + "' is not loaded and this loader does not fetch any");
			}
		};
	}

}
