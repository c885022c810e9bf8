package dev.nixl4j.kv;

import java.lang.System.Logger.Level;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * A {@link KvProducer}'s leases: the leases held, by request, and how the last ones
 * ended; what decides a consumer's done or release message against them; their expiry;
 * and the accounting a drain waits on (leases held, answers not sent yet). The producer's
 * one lock guards all of it, so that a lease's blocks are released in one place whatever
 * ends it. A lease ends only by messages of its consumer: the agent the lease names, and
 * in any case the first agent that reported for a rank; messages from any other agent
 * about a lease held or remembered change nothing, are not answered and are counted.
 */
final class LeaseTable {

	private static final System.Logger logger = System.getLogger(KvProducer.class.getName());

	/**
	 * How many ended leases are remembered, to answer a repeated done message as the
	 * first was (HELD for a completed lease), or EXPIRED, RELEASED or STALE, rather than
	 * UNKNOWN.
	 */
	private static final int REMEMBERED_ENDINGS = 4096;

	private final PagedKvCache cache;

	private final String agentName;

	private final String prefix;

	private final KvIntegrity integrity;

	private final LeaseThread thread;

	private final SecureRandom random = new SecureRandom();

	private final Object lock = new Object();

	private final Map<String, KvLease> leases = new HashMap<>();

	/**
	 * How leases ended that consumers may still ask about (a consumer repeats its done
	 * message when no answer came): the most recent {@link #REMEMBERED_ENDINGS}.
	 */
	private final Map<Long, Ending> ended = new LinkedHashMap<>() {

		private static final long serialVersionUID = 1L;

		@Override
		protected boolean removeEldestEntry(Map.Entry<Long, Ending> eldest) {
			return size() > REMEMBERED_ENDINGS;
		}

	};

	private boolean closed;

	/**
	 * How many consumers' notifications are being answered, or have an answer waiting to
	 * be tried again; guarded by the lock.
	 */
	private int answering;

	/** Leases ended, by {@link LeaseOutcome#ordinal()}. */
	private final AtomicLongArray outcomes = new AtomicLongArray(LeaseOutcome.values().length);

	/**
	 * Done and release messages about a lease held or remembered that came from another
	 * agent than its consumer.
	 */
	private final AtomicLong ignored = new AtomicLong();

	LeaseTable(PagedKvCache cache, String prefix, KvIntegrity integrity, LeaseThread thread) {
		this.cache = cache;
		this.agentName = cache.agent().name();
		this.prefix = prefix;
		this.integrity = integrity;
		this.thread = thread;
	}

	/**
	 * Holds a request's blocks under a new lease, which takes over the caller's reference
	 * on each, and whose expiry is scheduled on the producer's thread.
	 * @param params the lease's parameters but its id, generation digest, checksums and
	 * incarnation
	 */
	KvLease take(KvTransferParams params, int[] blockIds, List<Integer> checksums, Duration ttl,
			@Nullable String consumer) {
		String requestId = params.requestId();
		synchronized (this.lock) {
			if (this.closed) {
				throw new NixlException(NixlStatus.CLOSED, "kv_lease", this.agentName, null,
						"the KV producer is closed");
			}
			if (this.leases.containsKey(requestId)) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "kv_lease", this.agentName, null,
						"request '" + requestId + "' already holds a lease");
			}
			// the lease takes over the caller's reference on each block
			long[] generations = this.cache.allocator().generationsOfAllocated("kv_lease", blockIds);
			long digest = (this.integrity != KvIntegrity.NONE) ? BlockAllocator.digest(blockIds, generations)
					: KvMessages.NO_GENERATION;
			long id = newLeaseId();
			KvLease lease = new KvLease(params.toBuilder()
				.leaseId(id)
				.generation(digest)
				.checksums(checksums)
				.producerIncarnation(this.cache.handle().incarnation())
				.build(), generations, ttl, consumer);
			this.leases.put(requestId, lease);
			lease.expiry(this.thread.schedule(() -> expire(lease), ttl.toNanos(), TimeUnit.NANOSECONDS));
			return lease;
		}
	}

	/**
	 * What a consumer's done message decided: the lease's state at that moment, and the
	 * lease it ended ({@code ended}, how in {@code outcome}), if any, with the number of
	 * its blocks that had been handed out again.
	 */
	record Answer(String consumer, KvMessages.Done done, LeaseConfirmation confirmation, @Nullable KvLease ended,
			LeaseOutcome outcome, int reused, byte[] ack) {
	}

	/**
	 * Decides a consumer's report against the lease it names, releasing the lease's
	 * blocks when it was the last rank. Quick: the lock and the release of the blocks,
	 * nothing that waits.
	 * @return the answer, or {@code null} when the message is about a lease held or
	 * remembered and came from another agent than its consumer: it changed nothing, is
	 * counted ({@link #ignoredMessages()}) and must not be answered
	 */
	@Nullable Answer decide(String consumer, KvMessages.Done done) {
		LeaseConfirmation confirmation;
		KvLease ended = null;
		LeaseOutcome outcome = LeaseOutcome.COMPLETED;
		int reused = 0;
		synchronized (this.lock) {
			KvLease lease = held(done);
			if (lease != null && !lease.claim(done.rank(), consumer)) {
				this.ignored.incrementAndGet();
				return null;
			}
			if (lease != null && isStale(lease, done)) {
				confirmation = LeaseConfirmation.STALE;
				outcome = LeaseOutcome.STALE;
				this.leases.remove(done.requestId());
				lease.cancelExpiry();
				this.ended.put(lease.id(), Ending.of(LeaseConfirmation.STALE, lease));
				reused = releaseBlocks(lease);
				this.lock.notifyAll();
				ended = lease;
			}
			else if (lease != null) {
				confirmation = LeaseConfirmation.HELD;
				if (lease.markDone(done.rank(), done.read())) {
					this.leases.remove(done.requestId());
					lease.cancelExpiry();
					this.ended.put(lease.id(), Ending.completed(lease));
					reused = releaseBlocks(lease);
					ended = lease;
				}
			}
			else {
				// a repeated done (its answer was lost) is answered as the first was,
				// and ends nothing again
				Ending ending = this.ended.get(done.leaseId());
				LeaseConfirmation remembered = (ending != null) ? ending.answer(done, consumer)
						: LeaseConfirmation.UNKNOWN;
				if (remembered == null) {
					this.ignored.incrementAndGet();
					return null;
				}
				confirmation = remembered;
			}
		}
		return new Answer(consumer, done, confirmation, ended, outcome, reused,
				KvMessages.ack(this.prefix, done.requestId(), done.leaseId(), done.rank(), confirmation));
	}

	/**
	 * Whether a held lease's blocks were handed out again since it was taken, or the
	 * consumer read under another generation digest than the lease's. A done message
	 * without a digest (an older consumer) is checked against the producer's own blocks
	 * only. Under the lock.
	 */
	private boolean isStale(KvLease lease, KvMessages.Done done) {
		long digest = lease.params().generation();
		if (digest == KvMessages.NO_GENERATION) {
			return false;
		}
		if (done.generation() != KvMessages.NO_GENERATION && done.generation() != digest) {
			return true;
		}
		return BlockAllocator.digest(lease.blockIds(), this.cache.allocator().generations(lease.blockIds())) != digest;
	}

	/**
	 * A lease that a release message or the consumer's departure ended, with the number
	 * of its blocks that had been handed out again.
	 */
	record Released(KvLease lease, int reused) {
	}

	/**
	 * Ends a lease a consumer gave back. A release of a lease not held (ended, never
	 * made, a wrong id) changes nothing ({@code null}); nor does one from another agent
	 * than the lease's consumer or the one that reported for that rank, which is counted
	 * ({@link #ignoredMessages()}).
	 */
	@Nullable Released release(KvMessages.Done release, String consumer) {
		synchronized (this.lock) {
			KvLease lease = held(release);
			if (lease == null) {
				return null;
			}
			if (!lease.claim(release.rank(), consumer)) {
				this.ignored.incrementAndGet();
				return null;
			}
			this.leases.remove(release.requestId());
			lease.cancelExpiry();
			this.ended.put(lease.id(), Ending.of(LeaseConfirmation.RELEASED, lease));
			int reused = releaseBlocks(lease);
			this.lock.notifyAll();
			return new Released(lease, reused);
		}
	}

	/**
	 * Ends every lease taken for a consumer that is gone ({@link LeaseOutcome#RELEASED}).
	 * @return how many leases ended
	 */
	int releaseLeasesOf(String consumer) {
		List<Released> released = new ArrayList<>();
		synchronized (this.lock) {
			for (Iterator<KvLease> it = this.leases.values().iterator(); it.hasNext();) {
				KvLease lease = it.next();
				if (lease.consumer().filter(consumer::equals).isPresent()) {
					it.remove();
					lease.cancelExpiry();
					this.ended.put(lease.id(), Ending.of(LeaseConfirmation.RELEASED, lease));
					released.add(new Released(lease, releaseBlocks(lease)));
				}
			}
			if (!released.isEmpty()) {
				this.lock.notifyAll();
			}
		}
		if (!released.isEmpty()) {
			logger.log(Level.INFO,
					"KV producer of agent ''{0}'' released {1} leases of consumer ''{2}'', which is gone",
					this.agentName, released.size(), consumer);
		}
		for (Released lease : released) {
			conclude(lease.lease(), lease.reused(), LeaseOutcome.RELEASED);
		}
		return released.size();
	}

	/**
	 * Runs on the scheduler, which would swallow what a task throws: so everything is
	 * caught here, the blocks are released first and the outcome is ended whatever throws
	 * on the way.
	 */
	private void expire(KvLease lease) {
		boolean removed = false;
		int reused = 0;
		try {
			synchronized (this.lock) {
				if (this.leases.get(lease.requestId()) != lease) {
					return;
				}
				this.leases.remove(lease.requestId());
				removed = true;
				try {
					reused = releaseBlocks(lease);
					this.ended.put(lease.id(), Ending.of(LeaseConfirmation.EXPIRED, lease));
				}
				finally {
					this.lock.notifyAll();
				}
			}
			logger.log(Level.WARNING,
					"KV lease of request ''{0}'' (lease {1}) on agent ''{2}'' expired after {3} with {4} of {5} consumer"
							+ " ranks done; its {6} blocks were released",
					lease.requestId(), Long.toString(lease.id()), this.agentName, lease.ttl(), lease.doneCount(),
					lease.params().consumerRanks(), lease.blockIds().length);
			reportReused(lease, reused);
		}
		catch (Throwable ex) {
			this.thread.survived("the expiry of the lease of request '" + lease.requestId() + "'", ex);
		}
		finally {
			if (removed) {
				end(lease, LeaseOutcome.EXPIRED);
			}
		}
	}

	/**
	 * Stops taking leases and releases the blocks of every lease still held; their
	 * outcome is ended {@link LeaseOutcome#CLOSED}.
	 * @return whether this closed the table ({@code false} when it was closed already)
	 */
	boolean close() {
		List<KvLease> held;
		int[] reused;
		synchronized (this.lock) {
			if (this.closed) {
				return false;
			}
			this.closed = true;
			held = new ArrayList<>(this.leases.values());
			this.leases.clear();
			this.lock.notifyAll();
			reused = new int[held.size()];
			for (int i = 0; i < held.size(); i++) {
				held.get(i).cancelExpiry();
				reused[i] = releaseBlocks(held.get(i));
			}
		}
		this.thread.shutdownNow();
		for (int i = 0; i < held.size(); i++) {
			conclude(held.get(i), reused[i], LeaseOutcome.CLOSED);
		}
		return true;
	}

	/**
	 * The lease a done or release message names, if it is held and the rank is one of
	 * its. Under the lock.
	 */
	private @Nullable KvLease held(KvMessages.Done message) {
		KvLease lease = this.leases.get(message.requestId());
		if (lease != null && lease.id() == message.leaseId() && message.rank() >= 0
				&& message.rank() < lease.params().consumerRanks()) {
			return lease;
		}
		return null;
	}

	/**
	 * Releases the lease's reference on each of its blocks still of the generation it
	 * noted. Under the lock.
	 * @return how many blocks were handed out again while leased
	 */
	private int releaseBlocks(KvLease lease) {
		return this.cache.allocator().releaseOfGeneration(lease.blockIds(), lease.generations());
	}

	/**
	 * Ends the outcome of a lease whose blocks were released, after logging blocks that
	 * were handed out again while it held them.
	 */
	void conclude(KvLease lease, int reused, LeaseOutcome outcome) {
		reportReused(lease, reused);
		end(lease, outcome);
	}

	/** Logs blocks that were handed out again while a lease held them. */
	private void reportReused(KvLease lease, int reused) {
		if (reused > 0) {
			logger.log(Level.WARNING,
					"KV lease of request ''{0}'' (lease {1}) on agent ''{2}'': {3} of its {4} blocks were freed and"
							+ " handed out again while leased (released once too often); they were left to their new"
							+ " owner",
					lease.requestId(), Long.toString(lease.id()), this.agentName, reused, lease.blockIds().length);
		}
	}

	private void end(KvLease lease, LeaseOutcome outcome) {
		if (lease.end(outcome)) {
			this.outcomes.incrementAndGet(outcome.ordinal());
		}
	}

	private long newLeaseId() {
		long id;
		do {
			id = this.random.nextLong() >>> 1;
		}
		while (id == 0 || this.ended.containsKey(id));
		return id;
	}

	int activeLeases() {
		synchronized (this.lock) {
			return this.leases.size();
		}
	}

	long endedLeases(LeaseOutcome outcome) {
		return this.outcomes.get(outcome.ordinal());
	}

	long ignoredMessages() {
		return this.ignored.get();
	}

	int leasedBlocks() {
		synchronized (this.lock) {
			int blocks = 0;
			for (KvLease lease : this.leases.values()) {
				blocks += lease.blockIds().length;
			}
			return blocks;
		}
	}

	/**
	 * Counts an answer to a consumer being made or waiting to be tried again, which a
	 * drain waits for.
	 */
	void startAnswering() {
		synchronized (this.lock) {
			this.answering++;
		}
	}

	void answered() {
		synchronized (this.lock) {
			this.answering--;
			this.lock.notifyAll();
		}
	}

	/**
	 * Waits until no lease is held and the last consumer's answer has been sent (or the
	 * table closed, which drops the answers waiting to be tried again).
	 * @return {@code true} when no lease is left, {@code false} when the time ran out
	 * first
	 */
	boolean awaitEnded(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		synchronized (this.lock) {
			while (!this.leases.isEmpty() || (this.answering > 0 && !this.closed)) {
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0) {
					return false;
				}
				try {
					TimeUnit.NANOSECONDS.timedWait(this.lock, remaining);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return false;
				}
			}
			return true;
		}
	}

	/**
	 * How a lease ended, remembered to answer a done message that comes after: a
	 * consumer's repeat when the answer to its first was lost, or a rank late past an
	 * expiry or release. It keeps who may ask (the consumer the lease named, and the
	 * agent that reported each rank) and, for a completed lease, what makes a repeat
	 * answerable {@code HELD}: its generation digest and the read id of the done message
	 * that reported each rank.
	 */
	private record Ending(LeaseConfirmation confirmation, @Nullable String consumer, long generation,
			@Nullable String[] claimants, long[] reads) {

		static Ending of(LeaseConfirmation confirmation, KvLease lease) {
			return new Ending(confirmation, lease.consumer().orElse(null), KvMessages.NO_GENERATION, lease.claimants(),
					new long[0]);
		}

		static Ending completed(KvLease lease) {
			return new Ending(LeaseConfirmation.HELD, lease.consumer().orElse(null), lease.params().generation(),
					lease.claimants(), lease.reads());
		}

		/**
		 * The answer to a done message naming the lease, or {@code null} when it came
		 * from another agent than the lease's consumer or than the one that reported that
		 * rank. A repeat of the done message that reported a completed lease's rank (same
		 * agent, same read id) is {@code HELD} as the first was, that one having been
		 * decided while the blocks were held; anything else (another READ of the lease,
		 * which may have read the blocks after they were released, a consumer that names
		 * no READ) is {@code UNKNOWN}, and a repeat under another generation digest
		 * {@code STALE}.
		 */
		@Nullable LeaseConfirmation answer(KvMessages.Done done, String sender) {
			int rank = done.rank();
			String claimant = (rank >= 0 && rank < this.claimants.length) ? this.claimants[rank] : null;
			if ((this.consumer != null && !this.consumer.equals(sender))
					|| (claimant != null && !claimant.equals(sender))) {
				return null;
			}
			if (this.confirmation != LeaseConfirmation.HELD) {
				return this.confirmation;
			}
			if (claimant == null || done.read() == KvMessages.NO_READ || done.read() != this.reads[rank]) {
				return LeaseConfirmation.UNKNOWN;
			}
			if (done.generation() != KvMessages.NO_GENERATION && done.generation() != this.generation) {
				return LeaseConfirmation.STALE;
			}
			return LeaseConfirmation.HELD;
		}

	}

}
