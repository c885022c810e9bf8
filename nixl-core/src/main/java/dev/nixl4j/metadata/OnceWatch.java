package dev.nixl4j.metadata;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * A watch that tells its watcher at most once and stops being told once closed: the part
 * every {@link MetadataExchange.Watch} of this package shares. Subclasses say how to
 * forget the watch in their exchange's bookkeeping.
 */
abstract class OnceWatch implements MetadataExchange.Watch {

	private static final System.Logger logger = System.getLogger(OnceWatch.class.getName());

	final String agentName;

	private final Consumer<String> onRemoved;

	private final AtomicBoolean done = new AtomicBoolean();

	/**
	 * Counts watchers that threw, for exchanges that tell watchers on a thread of their
	 * own.
	 */
	private final @Nullable AtomicLong errors;

	OnceWatch(String agentName, Consumer<String> onRemoved) {
		this(agentName, onRemoved, null);
	}

	OnceWatch(String agentName, Consumer<String> onRemoved, @Nullable AtomicLong errors) {
		this.agentName = agentName;
		this.onRemoved = onRemoved;
		this.errors = errors;
	}

	/**
	 * Tells the watcher the agent is gone, unless it was told already or the watch was
	 * closed. A failing watcher, even one that throws an {@link Error}, is logged and
	 * counted, not propagated: the thread that tells it goes on to the other watches.
	 */
	final void fire() {
		if (!this.done.compareAndSet(false, true)) {
			return;
		}
		forget();
		try {
			this.onRemoved.accept(this.agentName);
		}
		catch (Throwable ex) {
			if (this.errors != null) {
				this.errors.incrementAndGet();
			}
			logger.log(System.Logger.Level.WARNING, "A watch of agent '" + this.agentName + "' failed", ex);
		}
	}

	/** Ends the watch without telling the watcher (the exchange is closing). */
	final void stop() {
		this.done.set(true);
	}

	/** Removes this watch from the exchange's bookkeeping. */
	abstract void forget();

	@Override
	public final void close() {
		if (this.done.compareAndSet(false, true)) {
			forget();
		}
	}

	@Override
	public String toString() {
		return "Watch[agent='" + this.agentName + "'" + (this.done.get() ? ", done" : "") + "]";
	}

}
