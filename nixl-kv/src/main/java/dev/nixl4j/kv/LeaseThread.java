package dev.nixl4j.kv;

import java.lang.System.Logger.Level;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * A {@link KvProducer}'s own daemon thread: it runs lease expiries and ends the outcomes
 * of the leases that consumers' messages ended, and never waits for a peer (answers that
 * wait for a consumer's metadata are {@link PendingAnswers}'). What one unit of its work
 * throws, even an {@link Error}, is logged and counted, and the thread goes on.
 */
final class LeaseThread {

	private static final System.Logger logger = System.getLogger(KvProducer.class.getName());

	private final String agentName;

	private final ScheduledThreadPoolExecutor scheduler;

	private volatile @Nullable Thread thread;

	private final AtomicLong internalErrors = new AtomicLong();

	LeaseThread(String agentName) {
		this.agentName = agentName;
		String threadName = "nixl4j-kv-producer-" + agentName;
		this.scheduler = new ScheduledThreadPoolExecutor(1, (runnable) -> {
			Thread thread = new Thread(runnable, threadName);
			thread.setDaemon(true);
			this.thread = thread;
			return thread;
		});
		this.scheduler.setRemoveOnCancelPolicy(true);
		this.scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
	}

	/**
	 * Runs a task after a delay.
	 * @throws RejectedExecutionException when the thread stopped
	 */
	ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
		return this.scheduler.schedule(task, delay, unit);
	}

	/**
	 * Runs the rest of the work on the producer's thread. A rejected hand-over (the
	 * producer closed meanwhile) must not reach the thread that completed the wait: that
	 * is the agent's progress loop.
	 * @return whether the task was handed over
	 */
	boolean handOver(Runnable task) {
		try {
			this.scheduler.execute(task);
			return true;
		}
		catch (RejectedExecutionException ex) {
			logger.log(Level.DEBUG, "KV producer closed while a notification was handed over");
			return false;
		}
	}

	/**
	 * Logs and counts what one unit of work of the producer's thread threw; the thread
	 * goes on.
	 */
	void survived(String unit, Throwable error) {
		long count = this.internalErrors.incrementAndGet();
		logger.log(Level.ERROR, "KV producer of agent '" + this.agentName + "': " + unit
				+ " threw; its thread goes on (errors so far: " + count + ")", error);
	}

	long internalErrors() {
		return this.internalErrors.get();
	}

	/**
	 * Stops the thread: interrupts the task running, and runs those not started on the
	 * calling thread, so that the outcomes handed over are ended (an expiry of a lease
	 * the table no longer holds does nothing).
	 */
	void shutdownNow() {
		for (Runnable task : this.scheduler.shutdownNow()) {
			task.run();
		}
	}

	/**
	 * Waits up to 10 s for the thread to stop, unless this is that thread.
	 */
	void awaitStopped() {
		try {
			if (Thread.currentThread() != this.thread && !this.scheduler.awaitTermination(10, TimeUnit.SECONDS)) {
				logger.log(Level.WARNING, "KV producer thread of agent ''{0}'' did not stop within 10 s",
						this.agentName);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
