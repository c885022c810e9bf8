package dev.nixl4j.metadata;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * A watch that tells its watcher at most once and stops being told once closed: the part
 * every {@link MetadataExchange.Watch} shares, for implementations of
 * {@link MetadataExchange} (the in-memory and HTTP exchanges use it). Subclasses say how
 * to forget the watch in their exchange's bookkeeping; a watcher that throws, even an
 * {@link Error}, is logged and counted, never propagated to the exchange's thread.
 */
public abstract class OnceWatch implements MetadataExchange.Watch {

	private static final System.Logger logger = System.getLogger(OnceWatch.class.getName());

	private final String agentName;

	private final Consumer<String> onRemoved;

	private final AtomicBoolean done = new AtomicBoolean();

	/**
	 * Counts watchers that threw, for exchanges that tell watchers on a thread of their
	 * own.
	 */
	private final @Nullable AtomicLong errors;

	/**
	 * Creates a watch.
	 * @param agentName the agent watched
	 * @param onRemoved told the agent's name once it is gone
	 */
	protected OnceWatch(String agentName, Consumer<String> onRemoved) {
		this(agentName, onRemoved, null);
	}

	/**
	 * Creates a watch that counts its watcher's failures.
	 * @param agentName the agent watched
	 * @param onRemoved told the agent's name once it is gone
	 * @param errors counts watchers that threw, or {@code null}
	 */
	protected OnceWatch(String agentName, Consumer<String> onRemoved, @Nullable AtomicLong errors) {
		this.agentName = agentName;
		this.onRemoved = onRemoved;
		this.errors = errors;
	}

	/**
	 * Tells the watcher the agent is gone, unless it was told already or the watch was
	 * closed. A failing watcher, even one that throws an {@link Error}, is logged and
	 * counted, not propagated: the thread that tells it goes on to the other watches.
	 */
	public final void fire() {
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

	/**
	 * Returns the agent watched.
	 * @return the agent's name
	 */
	public final String agentName() {
		return this.agentName;
	}

	/** Ends the watch without telling the watcher (the exchange is closing). */
	public final void stop() {
		this.done.set(true);
	}

	/** Removes this watch from the exchange's bookkeeping. */
	protected abstract void forget();

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
