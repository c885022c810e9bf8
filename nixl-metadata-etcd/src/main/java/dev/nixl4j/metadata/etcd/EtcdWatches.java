package dev.nixl4j.metadata.etcd;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import dev.nixl4j.metadata.MetadataExchange;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import org.jspecify.annotations.Nullable;

import static dev.nixl4j.metadata.etcd.EtcdConnection.MAX_PAUSE;
import static dev.nixl4j.metadata.etcd.EtcdConnection.MIN_PAUSE;
import static dev.nixl4j.metadata.etcd.EtcdConnection.bytes;

/**
 * The exchange's watches of peers' metadata keys. A watch starts from the store revision
 * its peer's metadata was fetched at, so that a removal between the fetch and the watch
 * is not missed.
 */
final class EtcdWatches {

	// the exchange logs under one name, which users configure
	private static final System.Logger logger = System.getLogger(EtcdMetadataExchange.class.getName());

	private final EtcdConnection connection;

	private final EtcdKeys keys;

	private final EtcdExchangeThread thread;

	private final Map<String, Long> fetchedRevisions = new ConcurrentHashMap<>();

	private final Set<EtcdWatch> watches = ConcurrentHashMap.newKeySet();

	EtcdWatches(EtcdConnection connection, EtcdKeys keys, EtcdExchangeThread thread) {
		this.connection = connection;
		this.keys = keys;
		this.thread = thread;
	}

	/**
	 * Notes the store revision at which a peer's metadata was fetched, for its watch.
	 */
	void fetched(String agentName, long revision) {
		this.fetchedRevisions.put(agentName, revision);
	}

	MetadataExchange.Watch watch(String agentName, Consumer<String> onRemoved) {
		Long fetched = this.fetchedRevisions.remove(agentName);
		EtcdWatch watch = new EtcdWatch(agentName, onRemoved);
		this.watches.add(watch);
		watch.start((fetched != null) ? fetched : currentRevision(agentName));
		return watch;
	}

	/**
	 * The store's revision now, so that a watch started after this call still sees a
	 * removal that happens before etcd has set the watch up; 0 (watch from whenever it is
	 * set up) when etcd cannot be asked.
	 */
	private long currentRevision(String agentName) {
		try {
			return this.connection
				.await(this.connection.client().getKVClient().get(bytes(this.keys.metadata(agentName))),
						this.connection.operationDeadline(), "watch", null, agentName)
				.getHeader()
				.getRevision();
		}
		catch (RuntimeException ex) {
			return 0;
		}
	}

	/** Closes every watch: watches of a closed exchange report nothing. */
	void closeAll() {
		for (EtcdWatch watch : this.watches) {
			watch.close();
		}
	}

	/**
	 * A watch of one peer's metadata key. jetcd resumes a watch after a disconnect by
	 * itself; when it gives up instead, the key is read again and the watch started over.
	 */
	private final class EtcdWatch implements MetadataExchange.Watch {

		private final String agentName;

		private final ByteSequence key;

		private final Consumer<String> onRemoved;

		private final AtomicBoolean done = new AtomicBoolean();

		private volatile Watch.@Nullable Watcher watcher;

		private long retryPause = MIN_PAUSE;

		EtcdWatch(String agentName, Consumer<String> onRemoved) {
			this.agentName = agentName;
			this.key = bytes(EtcdWatches.this.keys.metadata(agentName));
			this.onRemoved = onRemoved;
		}

		/**
		 * Watches for removals after the given store revision (0: from whenever etcd sets
		 * the watch up).
		 */
		void start(long revision) {
			WatchOption.Builder option = WatchOption.builder().withNoPut(true);
			if (revision > 0) {
				option.withRevision(revision + 1);
			}
			this.watcher = EtcdWatches.this.connection.client()
				.getWatchClient()
				.watch(this.key, option.build(), Watch.listener(this::onNext, this::onError));
			if (this.done.get()) {
				stopWatcher();
			}
		}

		private void onNext(WatchResponse response) {
			for (WatchEvent event : response.getEvents()) {
				if (event.getEventType() == WatchEvent.EventType.DELETE) {
					removed();
					return;
				}
			}
		}

		private void onError(Throwable error) {
			if (this.done.get()) {
				return;
			}
			logger.log(System.Logger.Level.DEBUG, "etcd watch of agent ''{0}'' failed, starting it again: {1}",
					this.agentName, EtcdConnection.rootMessage(error));
			stopWatcher();
			EtcdWatches.this.thread.schedule(this::restart, this.retryPause);
		}

		/** Reads the key again: gone means removed; present means watch on from now. */
		private void restart() {
			if (this.done.get()) {
				return;
			}
			EtcdConnection connection = EtcdWatches.this.connection;
			try {
				GetResponse response = connection.await(connection.client().getKVClient().get(this.key),
						connection.operationDeadline(), "watch", null, this.agentName);
				this.retryPause = MIN_PAUSE;
				if (response.getKvs().isEmpty()) {
					removed();
				}
				else {
					start(response.getHeader().getRevision());
				}
			}
			catch (RuntimeException ex) {
				this.retryPause = Math.min(this.retryPause * 2, MAX_PAUSE);
				EtcdWatches.this.thread.schedule(this::restart, this.retryPause);
			}
			catch (Error ex) {
				EtcdWatches.this.thread.survived("restarting the watch of agent '" + this.agentName + "'", ex);
				this.retryPause = Math.min(this.retryPause * 2, MAX_PAUSE);
				EtcdWatches.this.thread.schedule(this::restart, this.retryPause);
			}
		}

		private void removed() {
			if (!this.done.compareAndSet(false, true)) {
				return;
			}
			stopWatcher();
			EtcdWatches.this.watches.remove(this);
			try {
				// off jetcd's threads: the callback may call into NIXL
				EtcdWatches.this.thread.execute(this::notifyRemoved);
			}
			catch (RejectedExecutionException ex) {
				// closed meanwhile: watches of a closed exchange report nothing
			}
		}

		private void notifyRemoved() {
			try {
				this.onRemoved.accept(this.agentName);
			}
			catch (Throwable ex) {
				EtcdWatches.this.thread.survived("the handler of the removal of agent '" + this.agentName + "'", ex);
			}
		}

		private void stopWatcher() {
			Watch.Watcher current = this.watcher;
			if (current != null) {
				this.watcher = null;
				current.close();
			}
		}

		@Override
		public void close() {
			this.done.set(true);
			stopWatcher();
			EtcdWatches.this.watches.remove(this);
		}

	}

}
