package dev.nixl4j.kv;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

import org.jspecify.annotations.Nullable;

/**
 * A producer's hold on one request's blocks: made by {@link KvProducer#lease}, it takes
 * over the caller's reference on each block and keeps it until every consumer rank has
 * reported its read (the lease {@link LeaseOutcome#COMPLETED completes}), a consumer
 * gives it back ({@link LeaseOutcome#RELEASED}), the lease runs out
 * ({@link LeaseOutcome#EXPIRED}), a consumer finds a block handed out again
 * ({@link LeaseOutcome#STALE}) or the producer closes ({@link LeaseOutcome#CLOSED}); the
 * blocks are released then.
 *
 * <p>
 * {@link Options} says, for one lease, what differs from the simple case: another time to
 * live than the producer's, several consumer ranks, or the one consumer the lease is for.
 */
public final class KvLease {

	/**
	 * Replaced once, by the same parameters with a trace context, before it is handed
	 * out.
	 */
	private volatile KvTransferParams params;

	private final int[] blockIds;

	/** The blocks' generations when the lease was taken. */
	private final long[] generations;

	private final Duration ttl;

	private final CompletableFuture<LeaseOutcome> outcome = new CompletableFuture<>();

	/** Guarded by the producer's lock. */
	private final boolean[] ranksDone;

	/** The agent that first reported for each rank; guarded by the producer's lock. */
	private final @Nullable String[] claimants;

	/**
	 * The read id of the last done message that reported each rank; guarded by the
	 * producer's lock.
	 */
	private final long[] reads;

	/** Guarded by the producer's lock. */
	private int doneCount;

	/** Guarded by the producer's lock. */
	private @Nullable ScheduledFuture<?> expiry;

	/** The consumer the lease is for, when the producer was told. */
	private final @Nullable String consumer;

	KvLease(KvTransferParams params, long[] generations, Duration ttl, @Nullable String consumer) {
		this.params = params;
		this.consumer = consumer;
		this.blockIds = params.blockIdArray();
		this.generations = generations;
		this.ttl = ttl;
		this.ranksDone = new boolean[params.consumerRanks()];
		this.claimants = new String[params.consumerRanks()];
		this.reads = new long[params.consumerRanks()];
	}

	/**
	 * Returns the consumer's agent the lease was taken for.
	 * @return the agent, empty when the lease was taken without naming one
	 */
	public Optional<String> consumer() {
		return Optional.ofNullable(this.consumer);
	}

	/**
	 * Returns what the consumer needs to pull the blocks.
	 * @return the transfer parameters
	 */
	public KvTransferParams params() {
		return this.params;
	}

	/**
	 * Sets the trace context of the parameters the consumer gets
	 * ({@link KvObserver#leaseTaken}).
	 */
	void traceContext(KvTraceContext trace) {
		this.params = this.params.withTraceContext(trace);
	}

	/**
	 * Returns the request.
	 * @return the request id
	 */
	public String requestId() {
		return this.params.requestId();
	}

	/**
	 * Returns the lease id (unique per producer).
	 * @return the id
	 */
	public long id() {
		return this.params.leaseId();
	}

	/**
	 * Returns how long the lease lasts from its creation.
	 * @return the time to live
	 */
	public Duration ttl() {
		return this.ttl;
	}

	/**
	 * Returns a future of how the lease ended. It completes on the producer's thread,
	 * after the blocks were released; for a lease its consumers completed, that is just
	 * after the last consumer's done message was decided (and answered, when the
	 * consumer's metadata was loaded), so a consumer's pull may return first (wait with
	 * {@link KvProducer#awaitLeasesEnded} to see every outcome).
	 * @return a future completed once, after the blocks were released
	 */
	public CompletableFuture<LeaseOutcome> outcome() {
		return this.outcome.copy();
	}

	int[] blockIds() {
		return this.blockIds;
	}

	long[] generations() {
		return this.generations;
	}

	/**
	 * Marks a rank done by a done message naming a READ; returns whether every rank is
	 * done now. Under the producer's lock.
	 */
	boolean markDone(int rank, long read) {
		this.reads[rank] = read;
		if (!this.ranksDone[rank]) {
			this.ranksDone[rank] = true;
			this.doneCount++;
		}
		return this.doneCount == this.ranksDone.length;
	}

	/**
	 * Records the agent that reports for a rank; returns whether it may: the lease's
	 * consumer when the lease names one, and in any case the first agent that reported
	 * for that rank. Under the producer's lock.
	 */
	boolean claim(int rank, String agent) {
		if (this.consumer != null && !this.consumer.equals(agent)) {
			return false;
		}
		String claimant = this.claimants[rank];
		if (claimant == null) {
			this.claimants[rank] = agent;
			return true;
		}
		return claimant.equals(agent);
	}

	/**
	 * Returns a copy of the agent that first reported for each rank. Under the producer's
	 * lock.
	 */
	@Nullable String[] claimants() {
		return this.claimants.clone();
	}

	/**
	 * Returns a copy of the read id of the last done message of each rank. Under the
	 * producer's lock.
	 */
	long[] reads() {
		return this.reads.clone();
	}

	int doneCount() {
		return this.doneCount;
	}

	void expiry(ScheduledFuture<?> expiry) {
		this.expiry = expiry;
	}

	void cancelExpiry() {
		if (this.expiry != null) {
			this.expiry.cancel(false);
		}
	}

	/** Ends the lease; {@code false} when it had ended already. */
	boolean end(LeaseOutcome how) {
		return this.outcome.complete(how);
	}

	@Override
	public String toString() {
		return "KvLease[request '" + requestId() + "', lease " + id() + ", " + this.blockIds.length + " blocks, "
				+ this.ranksDone.length + " consumer ranks]";
	}

	/**
	 * Starts the options of a lease: the producer's time to live
	 * ({@link KvProducer.Builder#leaseTtl}), one consumer rank, and whichever agent
	 * claims the lease first as its consumer.
	 * @return the options
	 */
	public static Options options() {
		return Options.DEFAULT;
	}

	/**
	 * How one lease differs from the simple case,
	 * {@link KvProducer#lease(String, int[])}. Immutable: each method returns new
	 * options, so one value can be shared.
	 *
	 * <p>
	 * A lease that names no {@linkplain #consumer(String) consumer} is bound to the first
	 * agent that reports for each of its ranks. That is safe because nobody else can name
	 * the lease: its id, which every done and release message must carry, is 63 random
	 * bits from a {@link java.security.SecureRandom}, and only the consumer that got the
	 * {@link KvTransferParams} knows it. Naming the consumer still helps: the lease ends
	 * at once when that consumer is known to be gone
	 * ({@link KvProducer.Builder#watchConsumers}).
	 */
	public static final class Options {

		private static final Options DEFAULT = new Options(null, 1, null);

		private final @Nullable Duration ttl;

		private final int consumerRanks;

		private final @Nullable String consumer;

		private Options(@Nullable Duration ttl, int consumerRanks, @Nullable String consumer) {
			this.ttl = ttl;
			this.consumerRanks = consumerRanks;
			this.consumer = consumer;
		}

		/**
		 * Sets how long the blocks are held at most, instead of the producer's
		 * {@linkplain KvProducer.Builder#leaseTtl time to live}.
		 * @param ttl the time to live, positive
		 * @return new options
		 */
		public Options ttl(Duration ttl) {
			Objects.requireNonNull(ttl, "ttl");
			if (ttl.isNegative() || ttl.isZero()) {
				throw new IllegalArgumentException("ttl must be positive, was " + ttl);
			}
			return new Options(ttl, this.consumerRanks, this.consumer);
		}

		/**
		 * Sets how many consumer ranks each read a slice of heads (default 1, when both
		 * sides use the same tensor parallelism).
		 * @param consumerRanks the ranks, positive, which the layout's heads must split
		 * evenly over
		 * @return new options
		 */
		public Options consumerRanks(int consumerRanks) {
			if (consumerRanks <= 0) {
				throw new IllegalArgumentException("consumerRanks must be positive, was " + consumerRanks);
			}
			return new Options(this.ttl, consumerRanks, this.consumer);
		}

		/**
		 * Sets the one consumer the lease is for: only its done and release messages (for
		 * every rank) end the lease or are answered, and the lease also ends
		 * ({@link LeaseOutcome#RELEASED}) as soon as that consumer is known to be gone
		 * ({@link KvProducer#releaseLeasesOf}), rather than at its time to live.
		 * @param consumer the consumer's agent name, 1 to 256 characters
		 * @return new options
		 */
		public Options consumer(String consumer) {
			Objects.requireNonNull(consumer, "consumer");
			if (consumer.isBlank() || consumer.length() > 256) {
				throw new IllegalArgumentException(
						"the consumer's agent name must be 1 to 256 characters, was " + consumer.length());
			}
			return new Options(this.ttl, this.consumerRanks, consumer);
		}

		/**
		 * Returns the time to live.
		 * @return it, empty for the producer's
		 */
		public Optional<Duration> ttl() {
			return Optional.ofNullable(this.ttl);
		}

		/**
		 * Returns the number of consumer ranks.
		 * @return the ranks
		 */
		public int consumerRanks() {
			return this.consumerRanks;
		}

		/**
		 * Returns the consumer the lease is for.
		 * @return its agent name, empty for the first that claims the lease
		 */
		public Optional<String> consumer() {
			return Optional.ofNullable(this.consumer);
		}

		@Override
		public String toString() {
			return "KvLease.Options[ttl " + ((this.ttl != null) ? this.ttl : "the producer's") + ", "
					+ this.consumerRanks + " consumer ranks, consumer "
					+ ((this.consumer != null) ? "'" + this.consumer + "'" : "any") + "]";
		}

	}

}
