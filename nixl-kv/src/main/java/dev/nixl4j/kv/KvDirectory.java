package dev.nixl4j.kv;

import java.time.Duration;
import java.util.Objects;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;

/**
 * Where a {@link KvConsumer} finds producers by name, and how it makes itself known to
 * them: producers publish their {@link RemoteCacheHandle} beside their NIXL metadata as
 * the document {@value #HANDLE_DOCUMENT}; a consumer publishes its own metadata before it
 * reads from a producer (the producer confirms leases with notifications, so it loads the
 * consumer's metadata), and withdraws and publishes it again to make producers forget a
 * connection that failed.
 *
 * <p>
 * {@link #of} is the directory of a {@link MetadataExchange}; a producer publishes its
 * handle there with {@link MetadataPublication.Builder#document}
 * ({@code document(KvDirectory.HANDLE_DOCUMENT, cache.handle().toJson())}).
 */
public interface KvDirectory {

	/** The kind of the document that holds a producer's cache handle. */
	String HANDLE_DOCUMENT = "kv-cache-handle";

	/**
	 * Fetches a producer's cache handle, waiting until it is published or the deadline
	 * passes; a zero timeout asks once.
	 * @param producer the producer's agent
	 * @param timeout how long to wait
	 * @return the handle, checked and naming {@code producer}
	 * @throws NixlException {@link NixlStatus#TIMEOUT} when none is published by then,
	 * {@link NixlStatus#INVALID_METADATA} when the published one is not a handle of
	 * {@code producer}, {@link NixlStatus#UNAVAILABLE} when the directory cannot be
	 * reached
	 */
	RemoteCacheHandle resolve(String producer, Duration timeout);

	/**
	 * Makes sure this agent's metadata is published, so that producers can load it;
	 * nothing when it is.
	 * @throws NixlException when it cannot be published now
	 */
	void announce();

	/**
	 * Withdraws this agent's metadata and publishes it again, so that every peer that
	 * watches it forgets the loaded copy (and the connection that went with it) and loads
	 * it again.
	 * @throws NixlException when it cannot be published again now
	 */
	void reannounce();

	/**
	 * The directory of a metadata exchange.
	 * @param exchange where producers publish their metadata and handles
	 * @param own the publication of this consumer's agent in the same exchange
	 * @return the directory
	 */
	static KvDirectory of(MetadataExchange exchange, MetadataPublication own) {
		Objects.requireNonNull(exchange, "exchange");
		Objects.requireNonNull(own, "own");
		return new KvDirectory() {

			@Override
			public RemoteCacheHandle resolve(String producer, Duration timeout) {
				byte[] document = exchange.fetchDocument(producer, HANDLE_DOCUMENT, timeout);
				RemoteCacheHandle handle;
				try {
					handle = RemoteCacheHandle.fromJson(document);
				}
				catch (IllegalArgumentException ex) {
					throw new NixlException(NixlStatus.INVALID_METADATA, "kv_resolve", own.agentName(), producer,
							"the KV cache handle published for '" + producer + "' is not usable: " + ex.getMessage(),
							ex);
				}
				if (!handle.agentName().equals(producer)) {
					throw new NixlException(NixlStatus.INVALID_METADATA, "kv_resolve", own.agentName(), producer,
							"the KV cache handle published for '" + producer + "' names agent '" + handle.agentName()
									+ "'");
				}
				return handle;
			}

			@Override
			public void announce() {
				if (own.state().status() != MetadataPublication.Status.PUBLISHED) {
					own.publish();
				}
			}

			@Override
			public void reannounce() {
				own.withdraw();
				own.publish();
			}

			@Override
			public String toString() {
				return "KvDirectory[" + exchange + ", agent " + own.agentName() + "]";
			}

		};
	}

}
