package dev.nixl4j.metadata;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;

/**
 * A {@link MetadataExchange} inside one JVM, for tests and for agents that share a
 * process. {@link #fetch} waits on a condition until the metadata is published or the
 * deadline passes; {@link #invalidate} tells the watches of the agent on the calling
 * thread, after releasing the exchange's lock, in the order they were created.
 *
 * <p>
 * Values are stored as published and checked with {@link MetadataValues#check} when
 * fetched. Documents ({@link #publishDocument}) live with their agent's value and are
 * removed with it.
 */
public final class InMemoryMetadataExchange implements MetadataExchange {

	private final int maxBytes;

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition published = this.lock.newCondition();

	private final Map<String, byte[]> values = new HashMap<>();

	/** Documents by agent name and kind; an agent's entry exists while its value does. */
	private final Map<String, Map<String, byte[]>> documents = new HashMap<>();

	private final Map<String, List<InMemoryWatch>> watches = new HashMap<>();

	private boolean closed;

	/**
	 * Creates an exchange that accepts values up to
	 * {@link MetadataValues#DEFAULT_MAX_BYTES}.
	 */
	public InMemoryMetadataExchange() {
		this(MetadataValues.DEFAULT_MAX_BYTES);
	}

	/**
	 * Creates an exchange with a cap on fetched values.
	 * @param maxBytes the largest value {@link #fetch} accepts
	 */
	public InMemoryMetadataExchange(int maxBytes) {
		if (maxBytes <= 0) {
			throw new IllegalArgumentException("maxBytes must be positive, was " + maxBytes);
		}
		this.maxBytes = maxBytes;
	}

	@Override
	public void publish(String agentName, AgentMetadata metadata) {
		requireName(agentName);
		byte[] bytes = metadata.toByteArray();
		this.lock.lock();
		try {
			requireOpen("send_local_md", agentName);
			this.values.put(agentName, bytes);
			this.published.signalAll();
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public AgentMetadata fetch(String agentName, Duration timeout) {
		requireName(agentName);
		byte[] value = awaitValue(agentName, timeout);
		return MetadataValues.check("fetch_remote_md", agentName, value, this.maxBytes);
	}

	private byte[] awaitValue(String agentName, Duration timeout) {
		long remaining = timeout.isNegative() ? 0 : saturatedNanos(timeout);
		this.lock.lock();
		try {
			while (true) {
				requireOpen("fetch_remote_md", agentName);
				byte[] value = this.values.get(agentName);
				if (value != null) {
					return value;
				}
				if (remaining <= 0) {
					throw new NixlException(NixlStatus.TIMEOUT, "fetch_remote_md", null, agentName,
							"no metadata of agent '" + agentName + "' was published within " + timeout);
				}
				remaining = this.published.awaitNanos(remaining);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new NixlException(NixlStatus.CANCELLED, "fetch_remote_md", null, agentName,
					"interrupted while waiting for the metadata of agent '" + agentName + "'");
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void publishDocument(String agentName, String kind, byte[] document) {
		String operation = "publish_document";
		requireName(agentName);
		MetadataExchange.requireDocumentKind(kind);
		if (document.length > MAX_DOCUMENT_BYTES) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, agentName, null, "the document '" + kind
					+ "' is " + document.length + " bytes, over the limit of " + MAX_DOCUMENT_BYTES + " bytes");
		}
		byte[] copy = document.clone();
		this.lock.lock();
		try {
			requireOpen(operation, agentName);
			if (!this.values.containsKey(agentName)) {
				throw new NixlException(NixlStatus.ERROR_INVALID_STATE, operation, agentName, null,
						"the metadata of agent '" + agentName + "' is not published; publish it before its documents");
			}
			this.documents.computeIfAbsent(agentName, name -> new HashMap<>()).put(kind, copy);
			this.published.signalAll();
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public byte[] fetchDocument(String agentName, String kind, Duration timeout) {
		String operation = "fetch_document";
		requireName(agentName);
		MetadataExchange.requireDocumentKind(kind);
		long remaining = timeout.isNegative() ? 0 : saturatedNanos(timeout);
		this.lock.lock();
		try {
			while (true) {
				requireOpen(operation, agentName);
				Map<String, byte[]> kinds = this.documents.get(agentName);
				byte[] document = (kinds != null) ? kinds.get(kind) : null;
				if (document != null) {
					return document.clone();
				}
				if (remaining <= 0) {
					throw new NixlException(NixlStatus.TIMEOUT, operation, null, agentName,
							"no document '" + kind + "' of agent '" + agentName + "' was published within " + timeout);
				}
				remaining = this.published.awaitNanos(remaining);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new NixlException(NixlStatus.CANCELLED, operation, null, agentName,
					"interrupted while waiting for the document '" + kind + "' of agent '" + agentName + "'");
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Removes one document of an agent, leaving its metadata and other documents.
	 * Removing a document that is not published does nothing.
	 * @param agentName the agent
	 * @param kind the document's kind
	 * @return whether a document was removed
	 */
	public boolean removeDocument(String agentName, String kind) {
		this.lock.lock();
		try {
			Map<String, byte[]> kinds = this.documents.get(agentName);
			if (kinds == null || kinds.remove(kind) == null) {
				return false;
			}
			if (kinds.isEmpty()) {
				this.documents.remove(agentName);
			}
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void invalidate(String agentName) {
		requireName(agentName);
		List<InMemoryWatch> removed;
		this.lock.lock();
		try {
			requireOpen("invalidate_local_md", agentName);
			this.documents.remove(agentName);
			if (this.values.remove(agentName) == null) {
				return;
			}
			List<InMemoryWatch> watching = this.watches.remove(agentName);
			removed = (watching != null) ? watching : List.of();
		}
		finally {
			this.lock.unlock();
		}
		for (InMemoryWatch watch : removed) {
			watch.fire();
		}
	}

	@Override
	public Watch watch(String agentName, Consumer<String> onRemoved) {
		requireName(agentName);
		InMemoryWatch watch = new InMemoryWatch(agentName, onRemoved);
		this.lock.lock();
		try {
			requireOpen("watch", agentName);
			this.watches.computeIfAbsent(agentName, name -> new ArrayList<>()).add(watch);
		}
		finally {
			this.lock.unlock();
		}
		return watch;
	}

	/**
	 * Whether an agent's metadata is published now.
	 * @param agentName the agent
	 * @return {@code true} if a value is stored for it
	 */
	public boolean isPublished(String agentName) {
		this.lock.lock();
		try {
			return this.values.containsKey(agentName);
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Closes the exchange: waiting fetches fail with {@link NixlStatus#CLOSED}, watches
	 * stop without being told, and the stored values are dropped.
	 */
	@Override
	public void close() {
		this.lock.lock();
		try {
			this.closed = true;
			this.values.clear();
			this.documents.clear();
			this.watches.values().forEach(list -> list.forEach(InMemoryWatch::stop));
			this.watches.clear();
			this.published.signalAll();
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public String toString() {
		this.lock.lock();
		try {
			return "InMemoryMetadataExchange[agents=" + this.values.keySet() + (this.closed ? ", closed" : "") + "]";
		}
		finally {
			this.lock.unlock();
		}
	}

	private void requireOpen(String operation, String agentName) {
		if (this.closed) {
			throw new NixlException(NixlStatus.CLOSED, operation, null, agentName, "the exchange is closed");
		}
	}

	private static void requireName(String agentName) {
		if (agentName.isEmpty()) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "metadata_exchange", null, null,
					"the agent name is empty");
		}
	}

	private static long saturatedNanos(Duration timeout) {
		try {
			return timeout.toNanos();
		}
		catch (ArithmeticException ex) {
			return Long.MAX_VALUE;
		}
	}

	private void removeWatch(InMemoryWatch watch) {
		this.lock.lock();
		try {
			List<InMemoryWatch> watching = this.watches.get(watch.agentName());
			if (watching != null) {
				watching.remove(watch);
				if (watching.isEmpty()) {
					this.watches.remove(watch.agentName());
				}
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	private final class InMemoryWatch extends OnceWatch {

		InMemoryWatch(String agentName, Consumer<String> onRemoved) {
			super(agentName, onRemoved);
		}

		@Override
		protected void forget() {
			removeWatch(this);
		}

	}

}
