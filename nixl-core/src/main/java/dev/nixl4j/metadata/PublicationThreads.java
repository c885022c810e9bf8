package dev.nixl4j.metadata;

import java.lang.System.Logger.Level;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * The two daemon threads of a {@link MetadataPublication} (created when first needed),
 * which run its checks, the removals its watch reports and its republishes: two, so that
 * a removal the exchange reports is acted on while a check waits for its fetch. A task
 * that fails is logged and counted, and ends neither a repeated task nor the thread; work
 * handed over after {@link #shutdown()} is dropped.
 */
final class PublicationThreads {

	/** The publication's logger: the name its users configure covers this part. */
	private static final System.Logger logger = System.getLogger(MetadataPublication.class.getName());

	private final String agentName;

	private final AtomicLong failures;

	private final ScheduledThreadPoolExecutor scheduler;

	/**
	 * Creates the threads of a publication.
	 * @param agentName the agent whose entry the publication keeps
	 * @param failures the publication's count of failures, which failed tasks add to
	 */
	PublicationThreads(String agentName, AtomicLong failures) {
		this.agentName = agentName;
		this.failures = failures;
		String threadName = "nixl4j-metadata-publication-" + agentName;
		this.scheduler = new ScheduledThreadPoolExecutor(2, runnable -> {
			Thread thread = new Thread(runnable, threadName);
			thread.setDaemon(true);
			return thread;
		});
		this.scheduler.setRemoveOnCancelPolicy(true);
		this.scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
	}

	/** Runs a removal the exchange reported, now. */
	void submit(Runnable task) {
		try {
			this.scheduler.execute(guarded(task));
		}
		catch (RejectedExecutionException ex) {
			logger.log(Level.DEBUG, "Publication of agent ''{0}'' closed while a removal was reported", this.agentName);
		}
	}

	/** Runs a task once after a delay; {@code null} once shut down. */
	@Nullable ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
		try {
			return this.scheduler.schedule(guarded(task), delayNanos, TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			return null;
		}
	}

	/**
	 * Runs a task every interval, the first time an interval from now; {@code null} once
	 * shut down.
	 */
	@Nullable ScheduledFuture<?> scheduleRepeated(Runnable task, long intervalNanos) {
		try {
			return this.scheduler.scheduleWithFixedDelay(guarded(task), intervalNanos, intervalNanos,
					TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			return null;
		}
	}

	/** Stops the threads, interrupting the task they run. */
	void shutdown() {
		this.scheduler.shutdownNow();
	}

	/** A failing check or republish must not end the repeated task or the thread. */
	private Runnable guarded(Runnable task) {
		return () -> {
			try {
				task.run();
			}
			catch (RuntimeException | Error ex) {
				this.failures.incrementAndGet();
				logger.log(Level.WARNING, "Publication of agent '" + this.agentName + "' failed a check", ex);
			}
		};
	}

	@Override
	public String toString() {
		return "PublicationThreads[agent '" + this.agentName + "']";
	}

}
