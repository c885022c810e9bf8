package dev.nixl4j.metadata.http;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * The one daemon thread an {@link HttpMetadataExchange}'s watches and renewals share,
 * started on first use and stopped when the exchange closes.
 */
final class ExchangeThread {

	private final Object lock = new Object();

	/** Guarded by {@link #lock}. */
	private @Nullable ScheduledExecutorService executor;

	/** Guarded by {@link #lock}. */
	private boolean closed;

	/**
	 * Runs a task every period, the first time a period from now.
	 * @return the schedule, or {@code null} when the thread was stopped
	 */
	@Nullable ScheduledFuture<?> everyPeriod(Runnable task, long periodNanos) {
		synchronized (this.lock) {
			if (this.closed) {
				return null;
			}
			ScheduledExecutorService current = this.executor;
			if (current == null) {
				current = Executors.newSingleThreadScheduledExecutor(runnable -> {
					Thread thread = new Thread(runnable, "nixl4j-http-exchange-watch");
					thread.setDaemon(true);
					return thread;
				});
				this.executor = current;
			}
			return current.scheduleWithFixedDelay(task, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
		}
	}

	/**
	 * Stops the thread for good, interrupting the task it runs, and waits for it to end.
	 * @param timeout how long to wait
	 * @throws InterruptedException when interrupted while waiting
	 */
	void stop(Duration timeout) throws InterruptedException {
		ScheduledExecutorService current;
		synchronized (this.lock) {
			this.closed = true;
			current = this.executor;
			this.executor = null;
		}
		if (current != null) {
			current.shutdownNow();
			current.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
	}

}
