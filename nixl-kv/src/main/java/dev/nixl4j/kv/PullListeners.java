package dev.nixl4j.kv;

import java.util.Arrays;
import java.util.Objects;

/**
 * The {@link KvPullListener}s of a {@link KvConsumer}: an array replaced as a whole when
 * a listener is added, so that a pull reads it once and allocates nothing for it.
 */
final class PullListeners {

	private static final KvPullListener[] NONE = {};

	private volatile KvPullListener[] listeners = NONE;

	synchronized void add(KvPullListener listener) {
		Objects.requireNonNull(listener, "listener");
		KvPullListener[] grown = Arrays.copyOf(this.listeners, this.listeners.length + 1);
		grown[grown.length - 1] = listener;
		this.listeners = grown;
	}

	/** The listeners now, to be told of one pull. */
	KvPullListener[] current() {
		return this.listeners;
	}

	void confirmed(String producer, long nanos) {
		for (KvPullListener listener : this.listeners) {
			listener.confirmed(producer, nanos);
		}
	}

	void reconnected(String producer) {
		for (KvPullListener listener : this.listeners) {
			listener.reconnected(producer);
		}
	}

}
