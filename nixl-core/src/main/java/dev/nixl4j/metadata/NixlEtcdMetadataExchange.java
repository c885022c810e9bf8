package dev.nixl4j.metadata;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.engine.AgentCore;
import dev.nixl4j.ffm.NativeDriver;

/**
 * NIXL's built-in etcd exchange, for one agent of the native engine: {@code send_local_md},
 * {@code fetch_remote_md} and {@code invalidate_local_md} of NIXL's C API.
 *
 * <p>NIXL reads {@code NIXL_ETCD_ENDPOINTS} and {@code NIXL_ETCD_NAMESPACE} when it creates an
 * agent, so the agent must be configured with {@link #configure} before it is created. NIXL then
 * does the work on its own metadata thread: publishing and withdrawing are asynchronous, a fetched
 * peer is loaded straight into the agent (so {@link #fetch} is not offered; use {@link #load}),
 * and NIXL itself watches every peer it fetched and forgets it when the peer's keys are deleted.
 * Keys written this way carry no lease: they stay until withdrawn.
 *
 * <p>Peers loaded by NIXL do not appear in {@link NixlAgent#remoteAgents()}, which lists what was
 * loaded through nixl4j; {@link NixlAgent#hasRemoteMetadata(String)} asks NIXL.
 */
public final class NixlEtcdMetadataExchange implements MetadataExchange {

	/** NIXL's variable naming the etcd endpoints (comma separated). */
	public static final String ENDPOINTS_VARIABLE = "NIXL_ETCD_ENDPOINTS";

	/** NIXL's variable naming the namespace (NIXL's default is {@code /nixl/agents/}). */
	public static final String NAMESPACE_VARIABLE = "NIXL_ETCD_NAMESPACE";

	/** NIXL gives up a fetch whose key did not appear within this long (its etcd watch timeout). */
	private static final long NIXL_FETCH_WINDOW = TimeUnit.SECONDS.toNanos(5);

	private static final long MAX_POLL = TimeUnit.MILLISECONDS.toNanos(50);

	private final AgentCore agent;

	/**
	 * Binds the exchange to a native agent created with {@link #configure}.
	 * @param agent the agent
	 * @throws NixlException {@link NixlStatus#NOT_SUPPORTED} when the agent is not a native agent
	 * configured for NIXL's etcd exchange
	 */
	public NixlEtcdMetadataExchange(NixlAgent agent) {
		if (!(agent instanceof AgentCore core) || agent.engine() != Engine.NATIVE) {
			throw new NixlException(NixlStatus.NOT_SUPPORTED, "send_local_md", agent.name(), null,
					"NIXL's etcd exchange needs an agent of the native engine");
		}
		if (!agent.config().nativeEnvironment().containsKey(ENDPOINTS_VARIABLE)) {
			throw new NixlException(NixlStatus.NOT_SUPPORTED, "send_local_md", agent.name(), null,
					"the agent was not created for NIXL's etcd exchange: configure it with "
							+ "NixlEtcdMetadataExchange.configure(...) (sets " + ENDPOINTS_VARIABLE + ") before creating it");
		}
		this.agent = core;
	}

	/**
	 * Configures an agent for NIXL's etcd exchange, with NIXL's default namespace.
	 * @param builder the agent's configuration
	 * @param endpoints etcd endpoints, for example {@code http://10.0.0.5:2379}
	 * @return the builder
	 */
	public static AgentConfig.Builder configure(AgentConfig.Builder builder, String endpoints) {
		return builder.nativeEnvironment(ENDPOINTS_VARIABLE, requireText(endpoints, "endpoints"));
	}

	/**
	 * Configures an agent for NIXL's etcd exchange.
	 * @param builder the agent's configuration
	 * @param endpoints etcd endpoints, for example {@code http://10.0.0.5:2379}
	 * @param namespace the namespace; keys are {@code <namespace>/<agent>/metadata}
	 * @return the builder
	 */
	public static AgentConfig.Builder configure(AgentConfig.Builder builder, String endpoints, String namespace) {
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
	 * Publishes the bound agent's current full metadata ({@code send_local_md}); NIXL stores it
	 * asynchronously. NIXL publishes only the agent's own metadata, so {@code metadata} is not
	 * used.
	 * @param agentName the bound agent's name
	 * @param metadata ignored
	 * @throws NixlException {@link NixlStatus#NOT_SUPPORTED} for another agent's name
	 */
	@Override
	public void publish(String agentName, AgentMetadata metadata) {
		requireBound("send_local_md", agentName);
		this.agent.engineCall("send_local_md", NativeDriver.class, driver -> {
			driver.sendLocalMetadata();
			return null;
		});
	}

	/**
	 * Not offered: NIXL loads what it fetches straight into the agent and hands no bytes back.
	 * @throws NixlException {@link NixlStatus#NOT_SUPPORTED}, always
	 */
	@Override
	public AgentMetadata fetch(String agentName, Duration timeout) {
		throw new NixlException(NixlStatus.NOT_SUPPORTED, "fetch_remote_md", this.agent.name(), agentName,
				"NIXL's etcd exchange loads fetched metadata into the agent without returning it; use load(...)");
	}

	/**
	 * Fetches a peer's metadata into the bound agent with {@code fetch_remote_md} and waits until
	 * {@code check_remote_md} finds it loaded. NIXL keeps watching the peer and forgets it when
	 * its keys are deleted.
	 * @param agent the bound agent
	 * @param remoteAgent the peer
	 * @param timeout how long to wait for the peer's metadata
	 * @return a watch whose closing does nothing: NIXL's own watch cannot be stopped
	 * @throws NixlException {@link NixlStatus#TIMEOUT} naming the peer when it was not loaded in
	 * time
	 */
	@Override
	public Watch load(NixlAgent agent, String remoteAgent, Duration timeout) {
		String operation = "fetch_remote_md";
		requireBound(operation, agent.name());
		Objects.requireNonNull(remoteAgent, "remoteAgent");
		long deadline = System.nanoTime() + timeout.toNanos();
		long nextFetch = System.nanoTime();
		long pause = TimeUnit.MILLISECONDS.toNanos(1);
		while (true) {
			long now = System.nanoTime();
			if (now - nextFetch >= 0) {
				// NIXL waits a limited time for a key that is not there yet, then drops the request
				this.agent.engineCall(operation, NativeDriver.class, driver -> {
					driver.fetchRemoteMetadata(remoteAgent);
					return null;
				});
				nextFetch = now + NIXL_FETCH_WINDOW;
			}
			if (this.agent.hasRemoteMetadata(remoteAgent)) {
				return () -> {
				};
			}
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0) {
				throw new NixlException(NixlStatus.TIMEOUT, operation, this.agent.name(), remoteAgent,
						"NIXL did not load the metadata of agent '" + remoteAgent + "' from etcd within " + timeout
								+ " (is it published under the same namespace, and etcd reachable? see NIXL's log)");
			}
			// NIXL offers no completion callback: poll its state, backing off
			LockSupport.parkNanos(Math.min(remaining, pause));
			pause = Math.min(pause * 2, MAX_POLL);
		}
	}

	/**
	 * Withdraws the bound agent's metadata ({@code invalidate_local_md}): NIXL deletes its keys
	 * asynchronously, and peers that fetched it through NIXL forget it.
	 * @param agentName the bound agent's name
	 */
	@Override
	public void invalidate(String agentName) {
		requireBound("invalidate_local_md", agentName);
		this.agent.engineCall("invalidate_local_md", NativeDriver.class, driver -> {
			driver.invalidateLocalMetadata();
			return null;
		});
	}

	/**
	 * Not offered: NIXL watches the peers it fetched itself, and tells no one.
	 * @throws NixlException {@link NixlStatus#NOT_SUPPORTED}, always
	 */
	@Override
	public Watch watch(String agentName, Consumer<String> onRemoved) {
		throw new NixlException(NixlStatus.NOT_SUPPORTED, "watch", this.agent.name(), agentName,
				"NIXL's etcd exchange watches peers only for the agent it loaded them into; use EtcdMetadataExchange "
						+ "to be told of removals");
	}

	/**
	 * Does nothing: NIXL's etcd client belongs to the agent and goes with it.
	 */
	@Override
	public void close() {
	}

	private void requireBound(String operation, String agentName) {
		if (!this.agent.name().equals(agentName)) {
			throw new NixlException(NixlStatus.NOT_SUPPORTED, operation, this.agent.name(), null,
					"NIXL's etcd exchange acts only for the agent it is bound to, not for '" + agentName + "'");
		}
	}

	@Override
	public String toString() {
		return "NIXL etcd exchange of agent '" + this.agent.name() + "'";
	}

}
