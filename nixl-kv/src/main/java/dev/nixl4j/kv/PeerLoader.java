package dev.nixl4j.kv;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataExchange;

/**
 * Makes sure an agent holds a peer's NIXL metadata before a transfer to it or a
 * notification to it. {@link KvProducer} needs it to answer consumers it has never seen;
 * {@link KvConsumer} to reach a producer named by a {@link RemoteCacheHandle}.
 */
@FunctionalInterface
public interface PeerLoader {

	/**
	 * How many peers {@link #of} remembers having loaded, to tell a peer that is gone
	 * from one never seen.
	 */
	int REMEMBERED_PEERS = 4096;

	/**
	 * Loads a peer's metadata into the agent unless it is loaded already.
	 * @param agent the local agent
	 * @param peer the peer's agent name
	 * @param timeout how long to wait for the peer's metadata; zero asks once, without
	 * waiting (a {@link KvProducer} answering a consumer asks so, and asks again later,
	 * rather than wait on a peer that may never publish)
	 * @throws NixlException when it cannot be loaded in time
	 */
	void load(NixlAgent agent, String peer, Duration timeout);

	/**
	 * Loads peers through a metadata exchange ({@link MetadataExchange#load}), which also
	 * makes the agent forget a peer that disappears from the exchange.
	 *
	 * <p>
	 * A peer this loader loaded before and the agent forgot since (its entry was removed
	 * from the exchange, or it expired) is known to be gone: it is asked for once,
	 * without waiting, so that a peer that published again is picked up at once and one
	 * that did not fails at once with {@link NixlStatus#ERROR_NOT_FOUND}, naming it,
	 * instead of after the whole timeout.
	 * @param exchange the exchange
	 * @return the loader
	 */
	static PeerLoader of(MetadataExchange exchange) {
		Object lock = new Object();
		// bounded: peers that restart come back under new names
		Set<String> loaded = Collections.newSetFromMap(new LinkedHashMap<>(16, 0.75f, true) {

			private static final long serialVersionUID = 1L;

			@Override
			protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
				return size() > REMEMBERED_PEERS;
			}

		});
		return (agent, peer, timeout) -> {
			// one load at a time: two threads loading the same peer would load it twice
			synchronized (lock) {
				if (agent.hasRemoteMetadata(peer)) {
					return;
				}
				String key = agent.name() + '\u0000' + peer;
				if (!loaded.contains(key)) {
					exchange.load(agent, peer, timeout);
					loaded.add(key);
					return;
				}
				try {
					exchange.load(agent, peer, Duration.ZERO);
				}
				catch (NixlException ex) {
					if (ex.status() != NixlStatus.TIMEOUT) {
						throw ex;
					}
					throw new NixlException(NixlStatus.ERROR_NOT_FOUND, "load_remote_md", agent.name(), peer,
							"the metadata of '" + peer + "' was removed from the exchange and is not published again"
									+ " (the peer stopped, or its entry was deleted)",
							ex);
				}
			}
		};
	}

	/**
	 * Loads peers through NIXL's own etcd exchange of the agent
	 * ({@link NixlAgent#etcdMetadata()}), which also makes the agent forget a peer whose
	 * keys are deleted. A peer that is gone fails with {@link NixlStatus#TIMEOUT} at the
	 * deadline: NIXL cannot tell it from one not published yet.
	 * @return the loader, which fails with {@link NixlStatus#NOT_SUPPORTED} for an agent
	 * without that exchange
	 */
	static PeerLoader nixlEtcd() {
		return (agent, peer, timeout) -> {
			if (agent.hasRemoteMetadata(peer)) {
				return;
			}
			agent.etcdMetadata()
				.orElseThrow(() -> new NixlException(NixlStatus.NOT_SUPPORTED, "fetch_remote_md", agent.name(), peer,
						"the agent has no NIXL etcd exchange: it must be of the native engine and created with etcd "
								+ "endpoints (NixlEtcdMetadata.configure)"))
				.load(peer, timeout);
		};
	}

	/**
	 * A loader for agents that received every peer's metadata some other way: it only
	 * checks.
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
