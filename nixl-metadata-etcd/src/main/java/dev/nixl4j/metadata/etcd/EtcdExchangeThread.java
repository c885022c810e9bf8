package dev.nixl4j.metadata.etcd;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The exchange's one daemon thread: it keeps the lease alive, starts watches again and
 * tells watchers of removals, off jetcd's threads. A unit of work that throws is logged
 * and counted, and the thread goes on.
 */
final class EtcdExchangeThread {

	// the exchange logs under one name, which users configure
	private static final System.Logger logger = System.getLogger(EtcdMetadataExchange.class.getName());

	private final ScheduledThreadPoolExecutor executor;

	private final AtomicLong internalErrors = new AtomicLong();

	EtcdExchangeThread() {
		this.executor = new ScheduledThreadPoolExecutor(1, runnable -> {
			Thread thread = new Thread(runnable, "nixl4j-etcd-exchange");
			thread.setDaemon(true);
			return thread;
		});
		this.executor.setRemoveOnCancelPolicy(true);
	}

	void scheduleWithFixedDelay(Runnable task, long periodMillis) {
		this.executor.scheduleWithFixedDelay(task, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
	}

	/**
	 * Runs a task after a pause, unless the exchange is closing.
	 */
	void schedule(Runnable task, long pauseNanos) {
		try {
			this.executor.schedule(task, pauseNanos, TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// the exchange is closing
		}
	}

	/**
	 * Runs a task soon.
	 * @throws RejectedExecutionException when the exchange was closed
	 */
	void execute(Runnable task) {
		this.executor.execute(task);
	}

	/**
	 * Logs and counts what one unit of work of the exchange's thread threw; the thread
	 * goes on.
	 */
	void survived(String unit, Throwable error) {
		long count = this.internalErrors.incrementAndGet();
		logger.log(System.Logger.Level.ERROR,
				"etcd exchange: " + unit + " threw; its thread goes on (errors so far: " + count + ")", error);
	}

	long internalErrors() {
		return this.internalErrors.get();
	}

	void shutdownNow() {
		this.executor.shutdownNow();
	}

}
