package dev.nixl4j.kv;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

import dev.nixl4j.NixlException;
import dev.nixl4j.metadata.MetadataExchange;

/**
 * Watches the entries of the consumers a {@link KvProducer}'s leases are for, so that the
 * leases of a consumer whose entry leaves the exchange end at once: one watch per
 * consumer, the oldest closed when more than {@link #MAX_WATCHED} are watched (a consumer
 * that restarts comes back under a new name, or publishes again under the same one).
 */
final class ConsumerWatch implements AutoCloseable {

	private static final System.Logger logger = System.getLogger(ConsumerWatch.class.getName());

	/** The most consumers watched at once. */
	static final int MAX_WATCHED = 4096;

	private final MetadataExchange exchange;

	private final Consumer<String> gone;

	private final Map<String, MetadataExchange.Watch> watches = new LinkedHashMap<>(16, 0.75f, true);

	private boolean closed;

	ConsumerWatch(MetadataExchange exchange, Consumer<String> gone) {
		this.exchange = exchange;
		this.gone = gone;
	}

	/** Watches a consumer unless it is watched already. */
	void watch(String consumer) {
		synchronized (this.watches) {
			if (this.closed || this.watches.get(consumer) != null) {
				return;
			}
			try {
				this.watches.put(consumer, this.exchange.watch(consumer, this::removed));
			}
			catch (NixlException ex) {
				// the lease still ends at its time to live
				logger.log(System.Logger.Level.WARNING, "Cannot watch KV consumer ''{0}'': {1}", consumer,
						ex.getMessage());
				return;
			}
			if (this.watches.size() > MAX_WATCHED) {
				var eldest = this.watches.entrySet().iterator();
				MetadataExchange.Watch dropped = eldest.next().getValue();
				eldest.remove();
				dropped.close();
			}
		}
	}

	private void removed(String consumer) {
		synchronized (this.watches) {
			MetadataExchange.Watch watch = this.watches.remove(consumer);
			if (watch != null) {
				watch.close();
			}
		}
		this.gone.accept(consumer);
	}

	@Override
	public void close() {
		synchronized (this.watches) {
			this.closed = true;
			this.watches.values().forEach(MetadataExchange.Watch::close);
			this.watches.clear();
		}
	}

}
