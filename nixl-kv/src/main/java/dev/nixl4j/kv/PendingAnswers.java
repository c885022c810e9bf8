package dev.nixl4j.kv;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * A {@link KvProducer}'s answers that wait for their consumer's metadata, and the threads
 * that look it up: apart from the producer's own thread, so that nothing a peer sends
 * holds up the leases' decisions, expiries and outcomes.
 *
 * <p>
 * Each lookup asks the {@link PeerLoader} once, without waiting (a zero timeout); a
 * consumer not found is asked for again after 50 ms, then after twice as long each time
 * up to 1 s, until its answers' deadline, the producer's peer timeout after each arrived.
 * Bounded per sender: one lookup at a time, {@value #MAX_PER_SENDER} answers waiting; and
 * in total: {@value #MAX_SENDERS} senders and {@value #MAX_ANSWERS} answers waiting,
 * {@value #THREADS} lookups at a time. An answer beyond a bound is dropped at once, one
 * whose consumer is not found by its deadline is dropped then: both are counted
 * ({@link #dropped()}), neither is sent.
 */
final class PendingAnswers implements AutoCloseable {

	private static final System.Logger logger = System.getLogger(KvProducer.class.getName());

	/** Answers that wait for one sender at most. */
	static final int MAX_PER_SENDER = 64;

	/** Senders whose answers wait at once at most. */
	static final int MAX_SENDERS = 64;

	/** Answers that wait at once at most. */
	static final int MAX_ANSWERS = 1024;

	/** Lookups at a time at most. */
	static final int THREADS = 2;

	private static final long FIRST_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	private static final long LAST_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

	/** How often a drop is logged at most. */
	private static final long DROP_LOG_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final NixlAgent agent;

	private final PeerLoader peers;

	private final Duration peerTimeout;

	private final LeaseThread thread;

	private final ScheduledThreadPoolExecutor lookups;

	private final Object lock = new Object();

	/** Guarded by the lock. */
	private final Map<String, Sender> senders = new HashMap<>();

	/** Guarded by the lock. */
	private int waiting;

	/** Guarded by the lock. */
	private boolean closed;

	/** Guarded by the lock. */
	private long lastDropLog;

	private final AtomicLong dropped = new AtomicLong();

	PendingAnswers(NixlAgent agent, PeerLoader peers, Duration peerTimeout, LeaseThread thread) {
		this.agent = agent;
		this.peers = peers;
		this.peerTimeout = peerTimeout;
		this.thread = thread;
		String threadName = "nixl4j-kv-answers-" + agent.name();
		this.lookups = new ScheduledThreadPoolExecutor(THREADS, (runnable) -> {
			Thread lookup = new Thread(runnable, threadName);
			lookup.setDaemon(true);
			return lookup;
		});
		this.lookups.setKeepAliveTime(30, TimeUnit.SECONDS);
		this.lookups.allowCoreThreadTimeOut(true);
		this.lookups.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
	}

	/**
	 * What becomes of one answer: sent ({@code failure} {@code null}), or not, and why.
	 */
	@FunctionalInterface
	interface Outcome {

		void ended(@Nullable Throwable failure);

	}

	/**
	 * Takes an answer to send once its consumer's metadata is loaded, when it is not, or
	 * when answers to that consumer wait already: answers to one consumer leave in the
	 * order they were decided. Never waits. The outcome of an answer taken is told once:
	 * on a lookup thread, or on this thread when it is dropped at once.
	 * @param loaded whether the consumer's metadata is loaded
	 * @return whether it took the answer; {@code false}: send it now
	 */
	boolean take(String consumer, byte[] ack, Outcome outcome, boolean loaded) {
		long now = System.nanoTime();
		String full;
		boolean log = false;
		synchronized (this.lock) {
			Sender sender = this.senders.get(consumer);
			if (sender == null && loaded && !this.closed) {
				return false;
			}
			full = this.closed ? null : room(sender);
			if (!this.closed && full == null) {
				if (sender == null) {
					sender = new Sender(consumer);
					this.senders.put(consumer, sender);
				}
				sender.answers.add(new Waiting(consumer, ack, now, now + this.peerTimeout.toNanos(), outcome));
				this.waiting++;
				if (!sender.looking) {
					schedule(sender, 0);
				}
				return true;
			}
			log = full != null && logDue(now);
		}
		if (full == null) {
			// the producer is closed
			tell(consumer, outcome, closed());
			return true;
		}
		long count = this.dropped.incrementAndGet();
		if (log) {
			logger.log(Level.WARNING,
					"KV producer of agent ''{0}'' dropped an answer to ''{1}'', whose metadata is not loaded: {2}"
							+ " (answers dropped so far: {3}; drops are logged at most every 10 s)",
					this.agent.name(), consumer, full, count);
		}
		tell(consumer, outcome, new NixlException(NixlStatus.BUSY, "kv_answer", this.agent.name(), consumer,
				"the answer was dropped: " + full));
		return true;
	}

	/** Whether a drop is to be logged: none was in the last 10 s. Under the lock. */
	private boolean logDue(long now) {
		if (this.lastDropLog != 0 && now - this.lastDropLog - DROP_LOG_NANOS < 0) {
			return false;
		}
		this.lastDropLog = now;
		return true;
	}

	/** Tells an answer's outcome; what that throws is counted, and the caller goes on. */
	private void tell(String consumer, Outcome outcome, @Nullable Throwable failure) {
		try {
			outcome.ended(failure);
		}
		catch (RuntimeException | Error ex) {
			this.thread.survived("ending the answer to '" + consumer + "'", ex);
		}
	}

	/**
	 * Why there is no room for another answer to a sender, {@code null} when there is.
	 */
	private @Nullable String room(@Nullable Sender sender) {
		if (this.waiting >= MAX_ANSWERS) {
			return MAX_ANSWERS + " answers wait for their consumers' metadata already";
		}
		if (sender == null && this.senders.size() >= MAX_SENDERS) {
			return "answers to " + MAX_SENDERS + " other agents wait for their metadata already";
		}
		if (sender != null && sender.answers.size() >= MAX_PER_SENDER) {
			return MAX_PER_SENDER + " answers to that agent wait for its metadata already";
		}
		return null;
	}

	/**
	 * Schedules a sender's next lookup. Under the lock; a lookup refused (the producer is
	 * closing) leaves its answers to {@link #close}.
	 */
	private void schedule(Sender sender, long delayNanos) {
		try {
			this.lookups.schedule(() -> lookUp(sender), delayNanos, TimeUnit.NANOSECONDS);
			sender.looking = true;
		}
		catch (RejectedExecutionException ex) {
			sender.looking = false;
		}
	}

	private NixlException closed() {
		return new NixlException(NixlStatus.CLOSED, "kv_answer", this.agent.name(), null,
				"the KV producer closed before the consumer's metadata was found");
	}

	/**
	 * Asks for a sender's metadata once; sends its answers when it is loaded, drops those
	 * past their deadline when not, and asks again later for the rest.
	 */
	private void lookUp(Sender sender) {
		Throwable failure = null;
		try {
			this.peers.load(this.agent, sender.name, Duration.ZERO);
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
		}
		boolean found = failure == null && this.agent.hasRemoteMetadata(sender.name);
		if (found) {
			sendAll(sender);
			return;
		}
		List<Waiting> due = new ArrayList<>();
		long now = System.nanoTime();
		boolean log;
		synchronized (this.lock) {
			if (this.closed) {
				return;
			}
			Iterator<Waiting> it = sender.answers.iterator();
			while (it.hasNext()) {
				Waiting answer = it.next();
				// a loader that threw something else than a NixlException will not find
				// it
				if (!(failure instanceof NixlException) || now - answer.deadline() >= 0 || !this.agent.isOpen()) {
					it.remove();
					due.add(answer);
				}
			}
			this.waiting -= due.size();
			sender.looking = false;
			if (sender.answers.isEmpty()) {
				this.senders.remove(sender.name);
			}
			else {
				long pause = sender.pause;
				sender.pause = Math.min(pause * 2, LAST_RETRY_NANOS);
				// answers wait in the order they came, each the same time at most
				long untilDeadline = Objects.requireNonNull(sender.answers.peekFirst()).deadline() - now;
				schedule(sender, Math.max(0, Math.min(pause, untilDeadline)));
			}
			log = !due.isEmpty() && !(failure instanceof Error) && logDue(now);
		}
		if (failure instanceof Error error) {
			this.thread.survived("looking up the metadata of '" + sender.name + "' to answer it", error);
		}
		if (due.isEmpty()) {
			return;
		}
		long count = this.dropped.addAndGet(due.size());
		Throwable why = (failure != null) ? failure : new NixlException(NixlStatus.ERROR_NOT_FOUND, "kv_answer",
				this.agent.name(), sender.name, "the metadata of '" + sender.name + "' was not loaded");
		if (log) {
			logger.log(Level.WARNING,
					"KV producer of agent ''{0}'' gave up {1} answers to ''{2}'': its metadata was not found within"
							+ " {3} ({4}; answers dropped so far: {5}; drops are logged at most every 10 s)",
					this.agent.name(), due.size(), sender.name, this.peerTimeout, why.getMessage(), count);
		}
		for (Waiting answer : due) {
			tell(sender.name, answer.outcome(), why);
		}
	}

	/**
	 * Sends the answers to a sender that was found, in order, and those that come while
	 * they are sent; forgets the sender once none is left, so that later answers go at
	 * once.
	 */
	private void sendAll(Sender sender) {
		while (true) {
			List<Waiting> due;
			synchronized (this.lock) {
				if (this.closed) {
					return;
				}
				due = new ArrayList<>(sender.answers);
				sender.answers.clear();
				this.waiting -= due.size();
				if (due.isEmpty()) {
					sender.looking = false;
					this.senders.remove(sender.name);
					return;
				}
			}
			for (Waiting answer : due) {
				send(sender.name, answer);
			}
		}
	}

	private void send(String consumer, Waiting answer) {
		Throwable failure = null;
		try {
			this.agent.sendNotification(consumer, answer.ack());
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
			if (ex instanceof Error error) {
				this.thread.survived("answering '" + consumer + "'", error);
			}
			else {
				logger.log(Level.WARNING, "KV producer of agent ''{0}'' could not answer ''{1}'': {2}",
						this.agent.name(), consumer, ex.toString());
			}
		}
		tell(consumer, answer.outcome(), failure);
	}

	/**
	 * Returns how many answers wait now.
	 * @return the count
	 */
	int waiting() {
		synchronized (this.lock) {
			return this.waiting;
		}
	}

	/**
	 * Returns how long the answer that waits longest has waited.
	 * @return the time, zero when none waits
	 */
	Duration oldest() {
		long now = System.nanoTime();
		long oldest = 0;
		synchronized (this.lock) {
			for (Sender sender : this.senders.values()) {
				Waiting first = sender.answers.peekFirst();
				if (first != null) {
					oldest = Math.max(oldest, now - first.arrived());
				}
			}
		}
		return Duration.ofNanos(oldest);
	}

	/**
	 * Returns how many answers were dropped: no room, or their consumer's metadata not
	 * found in time.
	 * @return the count
	 */
	long dropped() {
		return this.dropped.get();
	}

	/**
	 * Stops the lookups and drops the answers still waiting (not counted: the producer
	 * closed); their outcomes are told.
	 */
	@Override
	public void close() {
		List<Waiting> left = new ArrayList<>();
		synchronized (this.lock) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			for (Sender sender : this.senders.values()) {
				left.addAll(sender.answers);
			}
			this.senders.clear();
			this.waiting = 0;
		}
		this.lookups.shutdownNow();
		NixlException closing = closed();
		for (Waiting answer : left) {
			tell(answer.consumer(), answer.outcome(), closing);
		}
	}

	/** One answer waiting. */
	private record Waiting(String consumer, byte[] ack, long arrived, long deadline, Outcome outcome) {
	}

	/** The answers waiting for one sender, oldest first; guarded by the lock. */
	private static final class Sender {

		final String name;

		final ArrayDeque<Waiting> answers = new ArrayDeque<>();

		/** Whether a lookup is scheduled or running. */
		boolean looking;

		long pause = FIRST_RETRY_NANOS;

		Sender(String name) {
			this.name = name;
		}

	}

}
