package dev.nixl4j.metadata.http;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.OnceWatch;
import org.jspecify.annotations.Nullable;

/**
 * The watches of an {@link HttpMetadataExchange}: polls each watched peer's entry every
 * poll interval on the thread the exchange shares with its renewals (one request per
 * watched peer and pass); a watch fires once, at the first 404 after it saw the entry.
 * Watches of the same peer fire in the order they were created.
 */
final class RegistryWatches {

	/** The exchange's logger: the name its users configure covers all of its parts. */
	private static final System.Logger logger = System.getLogger(HttpMetadataExchange.class.getName());

	private final RegistryClient client;

	private final ExchangeThread thread;

	private final Duration pollInterval;

	private final Object lock = new Object();

	/** Guarded by {@link #lock}. */
	private final Map<String, List<HttpWatch>> watches = new LinkedHashMap<>();

	/** Guarded by {@link #lock}. */
	private @Nullable ScheduledFuture<?> polling;

	private final AtomicLong internalErrors = new AtomicLong();

	RegistryWatches(RegistryClient client, ExchangeThread thread, Duration pollInterval) {
		this.client = client;
		this.thread = thread;
		this.pollInterval = pollInterval;
	}

	/**
	 * Watches a peer, polling from now on.
	 * @param seen whether its entry counts as seen already, so that its removal before
	 * the first poll is reported
	 */
	MetadataExchange.Watch add(String agentName, Consumer<String> onRemoved, boolean seen) {
		this.client.requireUsable("watch", agentName);
		HttpWatch watch = new HttpWatch(agentName, onRemoved, seen);
		synchronized (this.lock) {
			this.client.requireUsable("watch", agentName);
			if (this.polling == null) {
				this.polling = this.thread.everyPeriod(this::poll, this.pollInterval.toNanos());
			}
			this.watches.computeIfAbsent(agentName, name -> new ArrayList<>()).add(watch);
		}
		return watch;
	}

	/**
	 * Asks the registry for a peer's entry once.
	 * @return the HTTP status, {@code -1} when the registry could not be reached
	 */
	int probe(String agentName) {
		HttpRequest request = this.client.metadataRequest(agentName).GET().build();
		try {
			return this.client.send(request).statusCode();
		}
		catch (IOException ex) {
			logger.log(System.Logger.Level.DEBUG, () -> "Watch of agent '" + agentName
					+ "' could not reach the exchange: " + RegistryClient.describe(ex));
			return -1;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return -1;
		}
	}

	/** Forgets every watch without telling it: the exchange is closing. */
	void clear() {
		synchronized (this.lock) {
			this.watches.clear();
			this.polling = null;
		}
	}

	long internalErrors() {
		return this.internalErrors.get();
	}

	private void poll() {
		Map<String, List<HttpWatch>> snapshot = new LinkedHashMap<>();
		synchronized (this.lock) {
			this.watches.forEach((name, list) -> snapshot.put(name, List.copyOf(list)));
		}
		for (Map.Entry<String, List<HttpWatch>> entry : snapshot.entrySet()) {
			if (this.client.isClosing()) {
				return;
			}
			String agentName = entry.getKey();
			try {
				int status = probe(agentName);
				if (status == 200) {
					entry.getValue().forEach(HttpWatch::markSeen);
				}
				else if (status == 404) {
					for (HttpWatch watch : entry.getValue()) {
						watch.fireIfSeen();
					}
				}
			}
			catch (Throwable ex) {
				// the poller is a periodic task, which would stop for good on the first
				// throw
				this.internalErrors.incrementAndGet();
				logger.log(System.Logger.Level.ERROR,
						"Watch of agent '" + agentName + "' failed in this pass; the watch thread goes on", ex);
			}
		}
	}

	private void remove(HttpWatch watch) {
		synchronized (this.lock) {
			List<HttpWatch> list = this.watches.get(watch.agentName());
			if (list != null) {
				list.remove(watch);
				if (list.isEmpty()) {
					this.watches.remove(watch.agentName());
				}
			}
		}
	}

	@Override
	public String toString() {
		return "RegistryWatches[" + this.client.baseUri() + "]";
	}

	private final class HttpWatch extends OnceWatch {

		private volatile boolean seen;

		HttpWatch(String agentName, Consumer<String> onRemoved, boolean seen) {
			super(agentName, onRemoved, RegistryWatches.this.internalErrors);
			this.seen = seen;
		}

		void markSeen() {
			this.seen = true;
		}

		void fireIfSeen() {
			if (this.seen) {
				fire();
			}
		}

		@Override
		protected void forget() {
			remove(this);
		}

	}

}
