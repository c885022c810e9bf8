package dev.nixl4j.metadata;

import java.time.Duration;
import java.util.function.Consumer;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;

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
 *
 * <p>
 * Beside its metadata an agent may publish small <em>documents</em>
 * ({@link #publishDocument}), each under a kind such as {@code kv-cache-handle}: plain
 * data its peers need before they load the metadata. They share the metadata entry's
 * owner and lifetime. Exchanges that cannot keep them answer
 * {@link dev.nixl4j.NixlStatus#NOT_SUPPORTED}.
 */
public interface MetadataExchange extends AutoCloseable {

	/** The largest document {@link #publishDocument} accepts: 64 KiB. */
	int MAX_DOCUMENT_BYTES = 64 << 10;

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
	 * Publishes (or replaces) a small document beside an agent's metadata, under a kind
	 * such as {@code "kv-cache-handle"}: plain data peers need before they load the
	 * metadata. NIXL ignores it. The document has the metadata entry's owner and
	 * lifetime: {@link #invalidate invalidate(agentName)} removes it too, and a
	 * lease-backed entry's expiry removes it. The agent's metadata must be published
	 * first.
	 * @param agentName the agent the document belongs to
	 * @param kind the document's kind, see {@link #requireDocumentKind}
	 * @param document its bytes, at most {@link #MAX_DOCUMENT_BYTES}
	 * @throws NixlException {@link NixlStatus#NOT_SUPPORTED} by default;
	 * {@link NixlStatus#ERROR_INVALID_PARAM} for a bad kind or a document over
	 * {@link #MAX_DOCUMENT_BYTES}; {@link NixlStatus#ERROR_INVALID_STATE} when the
	 * agent's metadata is not published here
	 */
	default void publishDocument(String agentName, String kind, byte[] document) {
		throw new NixlException(NixlStatus.NOT_SUPPORTED, "publish_document", agentName, null,
				getClass().getSimpleName() + " does not keep documents beside metadata");
	}

	/**
	 * Fetches a peer's document of a kind, waiting for it to be published until the
	 * deadline (a zero timeout asks once).
	 * @param agentName the peer
	 * @param kind the document's kind, see {@link #requireDocumentKind}
	 * @param timeout how long to wait
	 * @return the bytes (at most {@link #MAX_DOCUMENT_BYTES})
	 * @throws NixlException {@link NixlStatus#TIMEOUT} (naming agent and kind) when
	 * absent at the deadline, {@link NixlStatus#UNAVAILABLE} when the exchange cannot be
	 * reached, {@link NixlStatus#NOT_SUPPORTED} by default
	 */
	default byte[] fetchDocument(String agentName, String kind, Duration timeout) {
		throw new NixlException(NixlStatus.NOT_SUPPORTED, "fetch_document", null, agentName,
				getClass().getSimpleName() + " does not keep documents beside metadata");
	}

	/**
	 * Checks a document kind: 1 to 64 characters of {@code [a-z0-9.-]}, starting with a
	 * letter or digit.
	 * @param kind the kind
	 * @return the kind
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} naming what is wrong
	 */
	static String requireDocumentKind(String kind) {
		String problem = null;
		if (kind.isEmpty() || kind.length() > 64) {
			problem = "must be 1 to 64 characters long, was " + kind.length();
		}
		else if (kind.charAt(0) == '.' || kind.charAt(0) == '-') {
			problem = "must start with a letter or digit";
		}
		else {
			for (int i = 0; i < kind.length() && problem == null; i++) {
				char c = kind.charAt(i);
				if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) {
					problem = "may hold only a-z, 0-9, '.' and '-' (character " + (i + 1) + " is not one)";
				}
			}
		}
		if (problem != null) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "document", null, null,
					"the document kind " + problem);
		}
		return kind;
	}

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
