package dev.nixl4j.internal.engine;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;

/**
 * {@link NixlEtcdMetadata} of one agent: its driver's etcd calls, each under the agent's
 * lifecycle like every other engine call.
 */
final class EtcdMetadataCapability implements NixlEtcdMetadata {

	/**
	 * NIXL gives up a fetch whose key did not appear within this long (its etcd watch
	 * timeout).
	 */
	private static final long NIXL_FETCH_WINDOW = TimeUnit.SECONDS.toNanos(5);

	private static final long FIRST_POLL = TimeUnit.MILLISECONDS.toNanos(1);

	private static final long MAX_POLL = TimeUnit.MILLISECONDS.toNanos(50);

	private final AgentCore agent;

	private final EtcdExchangeDriver driver;

	EtcdMetadataCapability(AgentCore agent, EtcdExchangeDriver driver) {
		this.agent = agent;
		this.driver = driver;
	}

	@Override
	public void publish() {
		this.agent.lifecycle().guarded("send_local_md", this.driver::sendLocalMetadata);
	}

	@Override
	public void load(String remoteAgent, Duration timeout) {
		Objects.requireNonNull(remoteAgent, "remoteAgent");
		Objects.requireNonNull(timeout, "timeout");
		if (remoteAgent.isBlank()) {
			throw new IllegalArgumentException("remoteAgent must not be blank");
		}
		if (timeout.isNegative()) {
			throw new IllegalArgumentException("timeout must not be negative, was " + timeout);
		}
		String operation = "fetch_remote_md";
		long start = System.nanoTime();
		long deadline = start + timeout.toNanos();
		if (this.agent.hasRemoteMetadata(remoteAgent)) {
			return;
		}
		long nextFetch = start;
		long pause = FIRST_POLL;
		while (true) {
			long now = System.nanoTime();
			if (now - nextFetch >= 0) {
				// NIXL waits a limited time for a key that is not there yet, then drops
				// the request
				this.agent.lifecycle().guarded(operation, () -> this.driver.fetchRemoteMetadata(remoteAgent));
				nextFetch = now + NIXL_FETCH_WINDOW;
			}
			if (this.agent.hasRemoteMetadata(remoteAgent)) {
				return;
			}
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0) {
				throw new NixlException(NixlStatus.TIMEOUT, operation, this.agent.name(), remoteAgent,
						"NIXL did not load the metadata of agent '" + remoteAgent + "' from etcd within " + timeout
								+ " (is it published under the same namespace, and etcd reachable? see NIXL's log)");
			}
			// NIXL offers no completion callback: poll its state, backing off
			LockSupport.parkNanos(Math.min(remaining, pause));
			if (Thread.currentThread().isInterrupted()) {
				throw new NixlException(NixlStatus.CANCELLED, operation, this.agent.name(), remoteAgent,
						"interrupted while waiting for NIXL to load the metadata of agent '" + remoteAgent + "'");
			}
			pause = Math.min(pause * 2, MAX_POLL);
		}
	}

	@Override
	public void invalidate() {
		this.agent.lifecycle().guarded("invalidate_local_md", this.driver::invalidateLocalMetadata);
	}

	@Override
	public String toString() {
		return "NIXL etcd exchange of agent '" + this.agent.name() + "'";
	}

}
