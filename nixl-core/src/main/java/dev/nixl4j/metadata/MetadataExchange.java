package dev.nixl4j.metadata;

import java.time.Duration;
import java.util.function.Consumer;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;

/**
 * Where agents publish their metadata and fetch their peers'. Names follow NIXL's own
 * exchange: {@code send_local_md} is {@link #publish}, {@code fetch_remote_md} is
 * {@link #fetch}, {@code invalidate_local_md} is {@link #invalidate}.
 *
 * <p>
 * Failures are {@link NixlException}s: {@link dev.nixl4j.NixlStatus#TIMEOUT} when a
 * peer's metadata did not appear before the deadline (the message names the agent),
 * {@link dev.nixl4j.NixlStatus#INVALID_METADATA} when a fetched value is oversize,
 * malformed or names another agent, {@link dev.nixl4j.NixlStatus#UNAVAILABLE} when the
 * exchange itself cannot be reached. Implementations are thread-safe.
 */
public interface MetadataExchange extends AutoCloseable {

	/**
	 * Publishes (or replaces) an agent's metadata.
	 * @param agentName the agent the metadata belongs to
	 * @param metadata its full metadata
	 */
	void publish(String agentName, AgentMetadata metadata);

	/**
	 * Publishes an agent's current full metadata.
	 * @param agent the agent
	 */
	default void publish(NixlAgent agent) {
		publish(agent.name(), agent.localMetadata());
	}

	/**
	 * Fetches a peer's metadata, waiting for it to be published until the deadline.
	 * @param agentName the peer
	 * @param timeout how long to wait
	 * @return its metadata, checked for size and framing, naming {@code agentName}
	 */
	AgentMetadata fetch(String agentName, Duration timeout);

	/**
	 * Withdraws an agent's published metadata; peers watching it are told it is gone.
	 * Withdrawing metadata that is not published does nothing.
	 * @param agentName the agent
	 */
	void invalidate(String agentName);

	/**
	 * Watches a peer: {@code onRemoved} runs (once) when its metadata is withdrawn or
	 * expires, for example when its process died and its lease ran out.
	 * @param agentName the peer
	 * @param onRemoved called with the peer's name
	 * @return the watch; closing it stops watching
	 */
	Watch watch(String agentName, Consumer<String> onRemoved);

	/**
	 * Fetches a peer's metadata, loads it into an agent, and watches the peer so that the
	 * agent forgets it when it disappears from the exchange.
	 * @param agent the local agent
	 * @param remoteAgent the peer
	 * @param timeout how long to wait for the peer's metadata
	 * @return the watch; closing it stops watching (the peer stays loaded)
	 */
	default Watch load(NixlAgent agent, String remoteAgent, Duration timeout) {
		agent.loadRemoteMetadata(fetch(remoteAgent, timeout));
		return watch(remoteAgent, gone -> {
			if (agent.isOpen() && agent.remoteAgents().contains(gone)) {
				agent.invalidateRemoteMetadata(gone);
			}
		});
	}

	/**
	 * Closes the exchange's connections and watches. Metadata this process published
	 * stays where the implementation keeps it unless it is lease-backed.
	 */
	@Override
	void close();

	/**
	 * A running watch of one peer.
	 */
	interface Watch extends AutoCloseable {

		/**
		 * Stops watching. Closing twice is harmless.
		 */
		@Override
		void close();

	}

}
