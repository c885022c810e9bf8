package dev.nixl4j.metadata.etcd;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.etcd.EtcdConnection.LeaseLost;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;

import static dev.nixl4j.metadata.etcd.EtcdConnection.bytes;

/**
 * The keys this exchange published, behind one lease: it grants the lease, keeps it alive
 * from the exchange's thread every TTL/3, and when etcd lost it grants a new one and puts
 * every published key back; closing revokes it.
 */
final class EtcdLeasedPublication {

	// the exchange logs under one name, which users configure
	private static final System.Logger logger = System.getLogger(EtcdMetadataExchange.class.getName());

	private static final ByteSequence EMPTY = ByteSequence.from(new byte[0]);

	private final EtcdConnection connection;

	private final EtcdKeys keys;

	private final Duration leaseTtl;

	private final EtcdExchangeThread thread;

	/**
	 * Guards the lease and the published keys, so a republish never races an invalidate.
	 */
	private final Object lock = new Object();

	private long leaseId;

	private final Map<String, byte[]> published = new ConcurrentHashMap<>();

	/**
	 * Documents by agent and kind, put back with the metadata; guarded by the lock.
	 */
	private final Map<String, Map<String, byte[]>> publishedDocuments = new ConcurrentHashMap<>();

	private final AtomicBoolean unreachableLogged = new AtomicBoolean();

	private volatile boolean stopped;

	EtcdLeasedPublication(EtcdConnection connection, EtcdKeys keys, Duration leaseTtl, EtcdExchangeThread thread) {
		this.connection = connection;
		this.keys = keys;
		this.leaseTtl = leaseTtl;
		this.thread = thread;
		thread.scheduleWithFixedDelay(this::keepAlive, Math.max(leaseTtl.toMillis() / 3, 100));
	}

	/**
	 * Puts an agent's anchor and metadata keys (and documents published before) under the
	 * lease, and keeps them there.
	 */
	void publish(String agentName, byte[] value) {
		synchronized (this.lock) {
			put(agentName, value, this.connection.operationDeadline());
			this.published.put(agentName, value);
		}
	}

	/**
	 * Puts a document beside an agent's published metadata, under the same lease.
	 * @throws NixlException with {@code ERROR_INVALID_STATE} when the metadata is not
	 * published through this exchange
	 */
	void publishDocument(String agentName, String kind, byte[] document) {
		String operation = "publish_document";
		synchronized (this.lock) {
			byte[] metadata = this.published.get(agentName);
			if (metadata == null) {
				throw new NixlException(NixlStatus.ERROR_INVALID_STATE, operation, agentName, null,
						"the metadata of agent '" + agentName
								+ "' is not published through this exchange; publish it before its documents");
			}
			Map<String, byte[]> kinds = this.publishedDocuments.computeIfAbsent(agentName,
					name -> new ConcurrentHashMap<>());
			byte[] previous = kinds.put(kind, document);
			long deadline = this.connection.operationDeadline();
			long lease = lease(deadline, agentName);
			try {
				try {
					this.connection.awaitReachable(
							() -> this.connection.client()
								.getKVClient()
								.put(bytes(this.keys.document(agentName, kind)), ByteSequence.from(document),
										PutOption.builder().withLeaseId(lease).build()),
							deadline, operation, agentName);
				}
				catch (LeaseLost ex) {
					// the metadata went with the lease: both go back under a new one
					forgetLease(lease);
					put(agentName, metadata, deadline);
				}
			}
			catch (RuntimeException ex) {
				if (previous != null) {
					kinds.put(kind, previous);
				}
				else {
					kinds.remove(kind);
				}
				throw ex;
			}
		}
	}

	/**
	 * Forgets an agent's keys and deletes every key under its prefix, as NIXL's
	 * {@code invalidate_local_md} does.
	 */
	void invalidate(String agentName) {
		String operation = "invalidate_local_md";
		synchronized (this.lock) {
			this.published.remove(agentName);
			this.publishedDocuments.remove(agentName);
			try {
				this.connection.await(this.connection.client()
					.getKVClient()
					.delete(bytes(this.keys.agentPrefix(agentName)), DeleteOption.builder().isPrefix(true).build()),
						this.connection.operationDeadline(), operation, agentName, null);
			}
			catch (LeaseLost ex) {
				throw this.connection.unavailable(operation, agentName, null, "unexpected answer from etcd",
						ex.getCause());
			}
		}
	}

	/**
	 * Puts the anchor, the metadata key and the agent's documents under the lease,
	 * granting a new one when it was lost.
	 */
	private void put(String agentName, byte[] value, long deadline) {
		Map<String, byte[]> documents = this.publishedDocuments.getOrDefault(agentName, Map.of());
		for (int attempt = 0;; attempt++) {
			long lease = lease(deadline, agentName);
			PutOption withLease = PutOption.builder().withLeaseId(lease).build();
			List<Op> puts = new ArrayList<>();
			puts.add(Op.put(bytes(this.keys.agentPrefix(agentName)), EMPTY, withLease));
			puts.add(Op.put(bytes(this.keys.metadata(agentName)), ByteSequence.from(value), withLease));
			documents.forEach((kind, document) -> puts
				.add(Op.put(bytes(this.keys.document(agentName, kind)), ByteSequence.from(document), withLease)));
			try {
				this.connection.awaitReachable(
						() -> this.connection.client().getKVClient().txn().Then(puts.toArray(Op[]::new)).commit(),
						deadline, "send_local_md", agentName);
				return;
			}
			catch (LeaseLost ex) {
				forgetLease(lease);
				if (attempt > 0) {
					throw this.connection.unavailable("send_local_md", agentName, null,
							"etcd lost the lease just granted", ex.getCause());
				}
			}
		}
	}

	private long lease(long deadline, String agentName) {
		if (this.leaseId == 0) {
			long seconds = Math.max(1, (this.leaseTtl.toMillis() + 999) / 1000);
			this.leaseId = this.connection
				.awaitReachable(() -> this.connection.client().getLeaseClient().grant(seconds), deadline,
						"send_local_md", agentName)
				.getID();
		}
		return this.leaseId;
	}

	private void forgetLease(long lease) {
		if (this.leaseId == lease) {
			this.leaseId = 0;
		}
	}

	/**
	 * Keeps the lease alive; when it was lost, grants a new one and puts every published
	 * key back. Runs on the exchange's own thread.
	 */
	private void keepAlive() {
		synchronized (this.lock) {
			if (this.stopped || this.published.isEmpty()) {
				return;
			}
			long deadline = this.connection.operationDeadline();
			try {
				long lease = this.leaseId;
				if (lease != 0) {
					try {
						LeaseKeepAliveResponse response = this.connection.await(
								this.connection.client().getLeaseClient().keepAliveOnce(lease), deadline, "keep_alive",
								null, null);
						if (response.getTTL() > 0) {
							reachable();
							return;
						}
					}
					catch (LeaseLost ex) {
						// fall through: grant a new lease
					}
					forgetLease(lease);
				}
				for (Map.Entry<String, byte[]> entry : this.published.entrySet()) {
					put(entry.getKey(), entry.getValue(), deadline);
				}
				logger.log(System.Logger.Level.INFO,
						"etcd lease was lost; published the metadata of {0} again under a new lease",
						this.published.keySet());
				reachable();
			}
			catch (NixlException ex) {
				if (this.unreachableLogged.compareAndSet(false, true)) {
					logger.log(System.Logger.Level.WARNING, "etcd exchange cannot keep its lease alive, retrying: {0}",
							ex.getMessage());
				}
			}
			catch (Throwable ex) {
				// a periodic task stops for good on the first throw: the lease would run
				// out
				this.thread.survived("keeping the lease alive", ex);
			}
		}
	}

	private void reachable() {
		if (this.unreachableLogged.compareAndSet(true, false)) {
			logger.log(System.Logger.Level.INFO, "etcd at {0} answers again", this.connection.endpoints());
		}
	}

	/**
	 * Stops keeping the lease alive: the exchange is closing.
	 */
	void stop() {
		this.stopped = true;
	}

	/**
	 * Forgets every published key and revokes the lease, which deletes them; when etcd
	 * cannot be told, the keys expire with the lease.
	 */
	void revoke() {
		long lease;
		synchronized (this.lock) {
			lease = this.leaseId;
			this.leaseId = 0;
			this.published.clear();
			this.publishedDocuments.clear();
		}
		try {
			if (lease != 0) {
				this.connection.await(this.connection.client().getLeaseClient().revoke(lease),
						this.connection.operationDeadline(), "close", null, null);
			}
		}
		catch (NixlException | LeaseLost ex) {
			logger.log(System.Logger.Level.WARNING, "could not revoke the etcd lease; the keys expire with it: {0}",
					ex.getMessage());
		}
	}

}
