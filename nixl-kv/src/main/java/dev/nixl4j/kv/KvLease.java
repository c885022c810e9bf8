package dev.nixl4j.kv;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

import org.jspecify.annotations.Nullable;

/**
 * A producer's hold on one request's blocks: made by {@link KvProducer#lease}, it keeps
 * one reference on each block until every consumer rank has reported its read (the lease
 * {@link LeaseOutcome#COMPLETED completes}), a consumer gives it back
 * ({@link LeaseOutcome#RELEASED}), the lease runs out ({@link LeaseOutcome#EXPIRED}), a
 * consumer finds a block handed out again ({@link LeaseOutcome#STALE}) or the producer
 * closes ({@link LeaseOutcome#CLOSED}); the blocks are released then.
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

}
