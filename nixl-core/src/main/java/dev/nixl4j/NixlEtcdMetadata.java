package dev.nixl4j;

import java.time.Duration;
import java.util.Objects;

/**
 * NIXL's built-in etcd metadata exchange, as a capability of one native agent: NIXL's own
 * etcd client publishes the agent's metadata ({@code send_local_md}), fetches peers'
 * metadata straight into the agent ({@code fetch_remote_md}) and withdraws the agent's
 * metadata ({@code invalidate_local_md}). An agent offers it
 * ({@link NixlAgent#etcdMetadata()}) when it is of the native engine and was
 * {@link #configure configured} with etcd endpoints before it was created, because NIXL
 * reads them only then.
 *
 * <p>
 * NIXL does the work on the agent's own metadata thread and hands no bytes back: a
 * fetched peer is loaded into the agent, and NIXL keeps watching every peer it fetched
 * and forgets it when the peer's keys are deleted. Keys written this way carry no lease:
 * they stay until withdrawn. Publishing and withdrawing are queued to that thread, which
 * reports no completion; a peer's {@link #load} is what sees the result.
 *
 * <p>
 * Peers loaded by NIXL do not appear in {@link NixlAgent#remoteAgents()}, which lists
 * what was loaded through nixl4j; {@link NixlAgent#hasRemoteMetadata(String)} asks NIXL.
 * Every call fails with {@link NixlStatus#CLOSED} once the agent is closed. Thread-safe.
 */
public interface NixlEtcdMetadata {

	/** NIXL's variable naming the etcd endpoints (comma separated). */
	String ENDPOINTS_VARIABLE = "NIXL_ETCD_ENDPOINTS";

	/** NIXL's variable naming the namespace (NIXL's default is {@code /nixl/agents/}). */
	String NAMESPACE_VARIABLE = "NIXL_ETCD_NAMESPACE";

	/**
	 * Configures an agent for NIXL's etcd exchange, with NIXL's default namespace.
	 * @param builder the agent's configuration
	 * @param endpoints etcd endpoints, for example {@code http://10.0.0.5:2379}
	 * @return the builder
	 * @throws IllegalArgumentException when {@code endpoints} is blank
	 */
	static AgentConfig.Builder configure(AgentConfig.Builder builder, String endpoints) {
		return builder.nativeEnvironment(ENDPOINTS_VARIABLE, requireText(endpoints, "endpoints"));
	}

	/**
	 * Configures an agent for NIXL's etcd exchange.
	 * @param builder the agent's configuration
	 * @param endpoints etcd endpoints, for example {@code http://10.0.0.5:2379}
	 * @param namespace the namespace; keys are {@code <namespace>/<agent>/metadata}
	 * @return the builder
	 * @throws IllegalArgumentException when {@code endpoints} or {@code namespace} is
	 * blank
	 */
	static AgentConfig.Builder configure(AgentConfig.Builder builder, String endpoints, String namespace) {
		return configure(builder, endpoints).nativeEnvironment(NAMESPACE_VARIABLE, requireText(namespace, "namespace"));
	}

	private static String requireText(String value, String what) {
		Objects.requireNonNull(value, what);
		if (value.isBlank()) {
			throw new IllegalArgumentException(what + " must not be blank");
		}
		return value;
	}

	/**
	 * Publishes the agent's current full metadata ({@code send_local_md}), replacing what
	 * it published before. Returns once NIXL queued the write; it never waits for etcd.
	 * @throws NixlException when NIXL refused the request, {@link NixlStatus#CLOSED} when
	 * the agent is closed
	 */
	void publish();

	/**
	 * Fetches a peer's metadata into the agent ({@code fetch_remote_md}) and waits until
	 * NIXL has loaded it; returns at once when the peer is loaded already. NIXL watches
	 * the peer from then on and forgets it when the peer's keys are deleted.
	 * @param remoteAgent the peer
	 * @param timeout how long to wait for the peer's metadata; zero checks once
	 * @throws NixlException {@link NixlStatus#TIMEOUT}, naming the peer, when it was not
	 * loaded before the deadline (not published under the same namespace, withdrawn, or
	 * etcd not reachable); {@link NixlStatus#CANCELLED} when the waiting thread is
	 * interrupted (its interrupt flag stays set); {@link NixlStatus#CLOSED} when the
	 * agent is closed
	 * @throws IllegalArgumentException when {@code remoteAgent} is blank or
	 * {@code timeout} is negative
	 */
	void load(String remoteAgent, Duration timeout);

	/**
	 * Withdraws the agent's metadata ({@code invalidate_local_md}): NIXL deletes its
	 * keys, and peers that fetched it through NIXL forget the agent. Returns once NIXL
	 * queued the deletion; it never waits for etcd. Withdrawing metadata that is not
	 * published does nothing.
	 * @throws NixlException when NIXL refused the request, {@link NixlStatus#CLOSED} when
	 * the agent is closed
	 */
	void invalidate();

}
