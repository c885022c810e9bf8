package dev.nixl4j.metadata;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.SettingChecks;
import org.jspecify.annotations.Nullable;

/**
 * Keeps an agent's metadata published in a {@link MetadataExchange}: once
 * {@link #publish()}ed, the entry is watched ({@link MetadataExchange#watch}) and checked
 * every {@link Builder#checkInterval check interval} (a fetch, waiting at most the
 * {@link Builder#checkTimeout check timeout}, compared byte for byte with what was
 * published), and an entry that vanished or holds other bytes is published again at once.
 * A failed republish is retried with a back-off that starts at 50 ms and doubles up to
 * {@link Builder#maxRetryInterval}. {@link #withdraw()} ends it and removes the entry.
 *
 * <p>
 * Documents set on the builder ({@link Builder#document}) are published right after every
 * (re)publication of the metadata ({@link MetadataExchange#publishDocument}), checked
 * with it (one missing or changed is published again, with the metadata), and removed
 * with it; the publication counts as published only when the metadata and every document
 * are.
 *
 * <p>
 * The {@link #state() state} says whether the entry is published now and, when it is not,
 * why: a health check reports it. An exchange that cannot fetch or watch (answers
 * {@link NixlStatus#NOT_SUPPORTED}) is published to once per {@link #publish()}, without
 * checks.
 *
 * <p>
 * Two daemon threads per publication (created when first needed) do the checks and
 * republishes, so a removal the exchange reports is acted on while a check waits; a check
 * that fails because the exchange cannot be reached changes nothing (the entry may well
 * be there), and is tried again at the next interval. Metadata never appears in logs or
 * states.
 */
public final class MetadataPublication implements AutoCloseable {

	private static final System.Logger logger = System.getLogger(MetadataPublication.class.getName());

	private static final long FIRST_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	/**
	 * Why a publication asked for is attempted again: not a republication of a vanished
	 * entry.
	 */
	private static final String EARLIER_ATTEMPT_FAILED = "an earlier attempt failed";

	/** How long a withdrawal waits for a republish in flight. */
	private static final Duration IN_FLIGHT_WAIT = Duration.ofSeconds(10);

	/** The default interval of checks: 1 s. */
	public static final Duration DEFAULT_CHECK_INTERVAL = Duration.ofSeconds(1);

	/**
	 * The default deadline of one check's fetch: 250 ms. Not zero: some exchanges (etcd)
	 * cannot answer a fetch without waiting at all, and an entry that only seems absent
	 * would be republished at every check.
	 */
	public static final Duration DEFAULT_CHECK_TIMEOUT = Duration.ofMillis(250);

	/** The default longest pause between two attempts of a republish: 1 s. */
	public static final Duration DEFAULT_MAX_RETRY_INTERVAL = Duration.ofSeconds(1);

	private final MetadataExchange exchange;

	private final NixlAgent agent;

	private final Duration checkInterval;

	private final Duration checkTimeout;

	/** Documents published beside the metadata, by kind, in the order they were set. */
	private final Map<String, byte[]> documents;

	private final long maxRetryNanos;

	private final PublicationThreads threads;

	private final Object lock = new Object();

	private final AtomicLong publications = new AtomicLong();

	private final AtomicLong republications = new AtomicLong();

	private final AtomicLong failures = new AtomicLong();

	/** Guarded by {@link #lock}. */
	private State state = new State(Status.NEW, "not published yet", Instant.now());

	/** What was published last; guarded by {@link #lock}. */
	private @Nullable AgentMetadata published;

	/**
	 * Counts publications, so that work scheduled for an older one is dropped; guarded by
	 * {@link #lock}.
	 */
	private long generation;

	/** Publications calling the exchange now; guarded by {@link #lock}. */
	private int attemptsInFlight;

	private MetadataExchange.@Nullable Watch watch;

	private @Nullable ScheduledFuture<?> checks;

	private @Nullable ScheduledFuture<?> retry;

	private long retryNanos = FIRST_RETRY_NANOS;

	private volatile boolean canFetch = true;

	private volatile boolean canWatch = true;

	private boolean closed;

	private MetadataPublication(Builder builder) {
		this.exchange = builder.exchange;
		this.agent = builder.agent;
		this.checkInterval = builder.checkInterval;
		this.checkTimeout = builder.checkTimeout;
		this.documents = Collections.unmodifiableMap(new LinkedHashMap<>(builder.documents));
		this.maxRetryNanos = builder.maxRetryInterval.toNanos();
		this.threads = new PublicationThreads(this.agent.name(), this.failures);
	}

	/**
	 * Starts building a publication of an agent's metadata.
	 * @param exchange where the metadata is published
	 * @param agent the agent whose current metadata ({@link NixlAgent#localMetadata()})
	 * is published
	 * @return the builder
	 */
	public static Builder builder(MetadataExchange exchange, NixlAgent agent) {
		return new Builder(exchange, agent);
	}

	/**
	 * Returns the agent's name: the entry this publication keeps.
	 * @return the name
	 */
	public String agentName() {
		return this.agent.name();
	}

	/**
	 * Publishes the agent's current metadata now (again, when it was published before:
	 * for memory registered since) and keeps it published from then on.
	 * @throws NixlException when the exchange refused it or cannot be reached; the
	 * publication then retries on its own and its state is {@link Status#NOT_PUBLISHED}
	 * @throws IllegalStateException when the publication was closed
	 */
	public void publish() {
		long current;
		synchronized (this.lock) {
			if (this.closed) {
				throw new IllegalStateException("the publication of agent '" + agentName() + "' is closed");
			}
			current = ++this.generation;
			cancelRetry();
		}
		RuntimeException failure = attempt(current, null);
		if (failure != null) {
			throw failure;
		}
	}

	/**
	 * Stops keeping the entry published and withdraws it
	 * ({@link MetadataExchange#invalidate}). Withdrawing twice, or what was never
	 * published, only sets the state.
	 * @throws NixlException when the exchange failed to withdraw it (the state is
	 * {@link Status#WITHDRAWN} anyway: it is no longer kept)
	 */
	public void withdraw() {
		boolean wasPublished;
		synchronized (this.lock) {
			this.generation++;
			// also after failed attempts: one may have landed after all
			wasPublished = this.state.status() != Status.NEW && this.state.status() != Status.WITHDRAWN;
			this.published = null;
			stopWatching();
			this.state = new State(Status.WITHDRAWN, "withdrawn", Instant.now());
		}
		if (wasPublished) {
			awaitAttemptInFlight();
			this.exchange.invalidate(agentName());
		}
	}

	/**
	 * Waits until a publication running on another thread has ended, so that it cannot
	 * put the entry back after a withdrawal; bounded, since the exchange bounds its own
	 * calls.
	 */
	private void awaitAttemptInFlight() {
		long deadline = System.nanoTime() + IN_FLIGHT_WAIT.toNanos();
		synchronized (this.lock) {
			while (this.attemptsInFlight > 0) {
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0) {
					logger.log(Level.WARNING,
							"Publication of agent ''{0}'' withdraws while a publication is still running", agentName());
					return;
				}
				try {
					TimeUnit.NANOSECONDS.timedWait(this.lock, remaining);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
			}
		}
	}

	/**
	 * Returns whether the entry is published now and, when not, why.
	 * @return the state
	 */
	public State state() {
		synchronized (this.lock) {
			return this.state;
		}
	}

	/**
	 * Returns how many times the metadata was published successfully, first publications
	 * and republications together.
	 * @return the count
	 */
	public long publications() {
		return this.publications.get();
	}

	/**
	 * Returns how many times an entry that had vanished or changed was published again.
	 * @return the count
	 */
	public long republications() {
		return this.republications.get();
	}

	/**
	 * Returns how many attempts to publish failed.
	 * @return the count
	 */
	public long failures() {
		return this.failures.get();
	}

	/**
	 * Stops the checks and the thread without withdrawing the entry. Closing twice is
	 * harmless.
	 */
	@Override
	public void close() {
		synchronized (this.lock) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			this.generation++;
			stopWatching();
		}
		this.threads.shutdown();
	}

	@Override
	public String toString() {
		return "MetadataPublication[agent '" + agentName() + "', " + state() + "]";
	}

	/**
	 * Publishes for a generation, unless a newer one began, and begins the next: what the
	 * older one scheduled (checks, a watch's report, a retry) is dropped from then on.
	 * {@code repair} names why an entry that was published is published again;
	 * {@code null} for a publication asked for.
	 * @return the failure, {@code null} when it was published or the attempt was dropped
	 */
	private @Nullable RuntimeException attempt(long forGeneration, @Nullable String repair) {
		long epoch;
		synchronized (this.lock) {
			if (forGeneration != this.generation || this.closed) {
				return null;
			}
			epoch = ++this.generation;
			if (repair != null) {
				this.state = new State(Status.NOT_PUBLISHED, repair, Instant.now());
			}
			stopWatching();
			this.attemptsInFlight++;
		}
		AgentMetadata metadata;
		try {
			metadata = this.agent.localMetadata();
			this.exchange.publish(agentName(), metadata);
			for (Map.Entry<String, byte[]> document : this.documents.entrySet()) {
				this.exchange.publishDocument(agentName(), document.getKey(), document.getValue());
			}
		}
		catch (RuntimeException ex) {
			failed(epoch, repair, ex);
			return ex;
		}
		finally {
			synchronized (this.lock) {
				this.attemptsInFlight--;
				this.lock.notifyAll();
			}
		}
		this.publications.incrementAndGet();
		if (repair != null && !repair.equals(EARLIER_ATTEMPT_FAILED)) {
			this.republications.incrementAndGet();
			logger.log(Level.INFO, "Published the metadata of agent ''{0}'' again: {1}", agentName(), repair);
		}
		synchronized (this.lock) {
			if (epoch != this.generation || this.closed) {
				return null;
			}
			this.published = metadata;
			this.retryNanos = FIRST_RETRY_NANOS;
			this.state = new State(Status.PUBLISHED, null, Instant.now());
		}
		startWatching(epoch);
		return null;
	}

	private void failed(long forGeneration, @Nullable String repair, RuntimeException ex) {
		this.failures.incrementAndGet();
		String reason = ((repair != null) ? repair + "; publishing it again failed: " : "publishing failed: ")
				+ ex.getMessage();
		logger.log(Level.WARNING, "Could not publish the metadata of agent ''{0}'', retrying: {1}", agentName(),
				ex.getMessage());
		synchronized (this.lock) {
			if (forGeneration != this.generation || this.closed) {
				return;
			}
			this.state = new State(Status.NOT_PUBLISHED, reason, Instant.now());
			long pause = this.retryNanos;
			this.retryNanos = Math.min(this.retryNanos * 2, this.maxRetryNanos);
			String again = (repair != null) ? repair : EARLIER_ATTEMPT_FAILED;
			this.retry = this.threads.schedule(() -> attempt(forGeneration, again), pause);
		}
	}

	/**
	 * Watches the entry and schedules its checks. Outside the lock: making a watch may
	 * ask the exchange (an HTTP request), and the state must stay readable meanwhile.
	 */
	private void startWatching(long forGeneration) {
		MetadataExchange.@Nullable Watch started = null;
		if (this.canWatch) {
			try {
				started = this.exchange.watch(agentName(), gone -> this.threads.submit(() -> vanished(forGeneration)));
			}
			catch (NixlException ex) {
				if (ex.status() == NixlStatus.NOT_SUPPORTED) {
					this.canWatch = false;
				}
				else {
					logger.log(Level.DEBUG, "Could not watch the entry of agent ''{0}'': {1}", agentName(),
							ex.getMessage());
				}
			}
		}
		synchronized (this.lock) {
			if (forGeneration != this.generation || this.closed) {
				if (started != null) {
					started.close();
				}
				return;
			}
			this.watch = started;
			if (this.canFetch) {
				this.checks = this.threads.scheduleRepeated(() -> check(forGeneration), this.checkInterval.toNanos());
			}
		}
	}

	/** Under the lock. */
	private void stopWatching() {
		if (this.watch != null) {
			this.watch.close();
			this.watch = null;
		}
		if (this.checks != null) {
			this.checks.cancel(false);
			this.checks = null;
		}
		cancelRetry();
	}

	private void cancelRetry() {
		if (this.retry != null) {
			this.retry.cancel(false);
			this.retry = null;
		}
	}

	private void vanished(long forGeneration) {
		attempt(forGeneration, "the entry of agent '" + agentName() + "' was removed from the exchange");
	}

	private void check(long forGeneration) {
		AgentMetadata expected;
		synchronized (this.lock) {
			if (forGeneration != this.generation || this.closed || this.state.status() != Status.PUBLISHED) {
				return;
			}
			expected = this.published;
		}
		String repair;
		try {
			AgentMetadata found = this.exchange.fetch(agentName(), this.checkTimeout);
			repair = found.equals(expected) ? checkDocuments()
					: "the entry of agent '" + agentName() + "' held other metadata than the agent published";
			if (repair == null) {
				return;
			}
		}
		catch (NixlException ex) {
			switch (ex.status()) {
				case TIMEOUT, ERROR_NOT_FOUND ->
					repair = "the entry of agent '" + agentName() + "' vanished from the exchange";
				case INVALID_METADATA -> repair = "the entry of agent '" + agentName()
						+ "' was replaced by a value that is not its metadata";
				case NOT_SUPPORTED -> {
					synchronized (this.lock) {
						this.canFetch = false;
						if (this.checks != null) {
							this.checks.cancel(false);
						}
					}
					return;
				}
				default -> {
					logger.log(Level.DEBUG, "Could not check the entry of agent ''{0}'': {1}", agentName(),
							ex.getMessage());
					return;
				}
			}
		}
		attempt(forGeneration, repair);
	}

	/**
	 * Fetches every document and compares it with what was published.
	 * @return why they must be published again, {@code null} when they are all there
	 */
	private @Nullable String checkDocuments() {
		for (Map.Entry<String, byte[]> document : this.documents.entrySet()) {
			String kind = document.getKey();
			try {
				byte[] found = this.exchange.fetchDocument(agentName(), kind, this.checkTimeout);
				if (!Arrays.equals(found, document.getValue())) {
					return "the document '" + kind + "' of agent '" + agentName()
							+ "' held other bytes than the agent published";
				}
			}
			catch (NixlException ex) {
				if (ex.status() == NixlStatus.TIMEOUT) {
					return "the document '" + kind + "' of agent '" + agentName() + "' vanished from the exchange";
				}
				throw ex;
			}
		}
		return null;
	}

	/**
	 * Whether an agent's entry is published.
	 */
	public enum Status {

		/** Not asked to publish yet. */
		NEW,

		/** Published, and unchanged at the last check. */
		PUBLISHED,

		/**
		 * Meant to be published but not now (it vanished, changed, or publishing failed);
		 * being repaired.
		 */
		NOT_PUBLISHED,

		/** Withdrawn on purpose. */
		WITHDRAWN

	}

	/**
	 * A publication's state.
	 *
	 * @param status whether the entry is published
	 * @param reason why it is not, {@code null} when it is
	 * @param since when the state began
	 */
	public record State(Status status, @Nullable String reason, Instant since) {

		/**
		 * Checks the state.
		 * @param status status
		 * @param reason reason
		 * @param since since
		 */
		public State {
			Objects.requireNonNull(status, "status");
			Objects.requireNonNull(since, "since");
		}

	}

	/**
	 * Builds a {@link MetadataPublication}.
	 */
	public static final class Builder {

		private final MetadataExchange exchange;

		private final NixlAgent agent;

		private Duration checkInterval = DEFAULT_CHECK_INTERVAL;

		private Duration maxRetryInterval = DEFAULT_MAX_RETRY_INTERVAL;

		private Duration checkTimeout = DEFAULT_CHECK_TIMEOUT;

		private final Map<String, byte[]> documents = new LinkedHashMap<>();

		private Builder(MetadataExchange exchange, NixlAgent agent) {
			this.exchange = Objects.requireNonNull(exchange, "exchange");
			this.agent = Objects.requireNonNull(agent, "agent");
		}

		/**
		 * Sets how often the published entry is fetched and compared with what was
		 * published (default {@link MetadataPublication#DEFAULT_CHECK_INTERVAL}). A
		 * removal the exchange reports to watches is acted on at once, whatever the
		 * interval.
		 * @param checkInterval the interval
		 * @return this builder
		 */
		public Builder checkInterval(Duration checkInterval) {
			this.checkInterval = SettingChecks.requirePositive(checkInterval, "checkInterval");
			return this;
		}

		/**
		 * Sets how long one check waits for the entry before it counts as vanished
		 * (default {@link MetadataPublication#DEFAULT_CHECK_TIMEOUT}); zero asks once,
		 * for exchanges that answer at once (in-memory, HTTP).
		 * @param checkTimeout the deadline
		 * @return this builder
		 */
		public Builder checkTimeout(Duration checkTimeout) {
			this.checkTimeout = SettingChecks.requireNotNegative(checkTimeout, "checkTimeout");
			return this;
		}

		/**
		 * Sets the longest pause between two attempts of a failing publication (default
		 * {@link MetadataPublication#DEFAULT_MAX_RETRY_INTERVAL}).
		 * @param maxRetryInterval the pause
		 * @return this builder
		 */
		public Builder maxRetryInterval(Duration maxRetryInterval) {
			this.maxRetryInterval = SettingChecks.requirePositive(maxRetryInterval, "maxRetryInterval");
			return this;
		}

		/**
		 * Adds a document published beside the metadata, right after every
		 * (re)publication of it, and removed with it; call once per kind (a kind set
		 * again replaces the document). The bytes are copied.
		 * @param kind the document's kind, see
		 * {@link MetadataExchange#requireDocumentKind}
		 * @param document its bytes, at most {@link MetadataExchange#MAX_DOCUMENT_BYTES}
		 * @return this builder
		 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for a bad kind or
		 * an oversize document
		 */
		public Builder document(String kind, byte[] document) {
			MetadataExchange.requireDocumentKind(kind);
			if (document.length > MetadataExchange.MAX_DOCUMENT_BYTES) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "publish_document", this.agent.name(), null,
						"the document '" + kind + "' is " + document.length + " bytes, over the limit of "
								+ MetadataExchange.MAX_DOCUMENT_BYTES + " bytes");
			}
			this.documents.put(kind, document.clone());
			return this;
		}

		/**
		 * Builds the publication; nothing is published before
		 * {@link MetadataPublication#publish()}.
		 * @return the publication
		 */
		public MetadataPublication build() {
			return new MetadataPublication(this);
		}

	}

}
