package dev.nixl4j.internal.engine;

/**
 * The calls of NIXL's built-in etcd exchange, offered by a driver whose agent was created
 * with etcd endpoints ({@link EngineDriver#etcdExchange()}). Each only queues work to
 * NIXL's metadata thread.
 */
public interface EtcdExchangeDriver {

	/**
	 * Publishes the agent's full metadata ({@code send_local_md}).
	 */
	void sendLocalMetadata();

	/**
	 * Starts fetching a peer's metadata into the agent ({@code fetch_remote_md});
	 * {@link EngineDriver#hasRemoteMetadata} tells when it is loaded.
	 * @param remoteAgent the peer
	 */
	void fetchRemoteMetadata(String remoteAgent);

	/**
	 * Withdraws the agent's metadata ({@code invalidate_local_md}).
	 */
	void invalidateLocalMetadata();

}
