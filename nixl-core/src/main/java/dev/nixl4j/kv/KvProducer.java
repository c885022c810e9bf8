package dev.nixl4j.kv;

import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import dev.nixl4j.DrainParticipant;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.NotificationSubscription;
import dev.nixl4j.SettingChecks;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.MetadataExchange;
import org.jspecify.annotations.Nullable;

/**
 * The prefill side of a KV block transfer: it leases a request's blocks to consumers that
 * pull them, and pushes blocks into consumers' caches.
 *
 * <p>
 * <b>Leases.</b> {@link #lease} retains the request's blocks and returns the
 * {@link KvTransferParams} a consumer needs. Each consumer rank READs the blocks with the
 * notification {@code <prefix>done:<request>:<lease>:<rank>}, which NIXL delivers only
 * after the data landed at the consumer; the producer answers it with a notification of
 * its own, {@code <prefix>ack:<request>:<lease>:<rank>:HELD} when the lease was held at
 * that moment, else {@code EXPIRED}, {@code RELEASED} or {@code UNKNOWN}. The blocks are
 * released when every rank has reported, when a consumer gives the lease back (its
 * notification {@code <prefix>release:<request>:<lease>:<rank>}, sent when its pull
 * failed or will not be made: {@link KvConsumer#release}), or when the lease expires; an
 * expiry is logged with the request id. Lease ids are random, so only a consumer that was
 * given a lease's {@link KvTransferParams} can name it; a release that names a lease not
 * held, or comes from another agent than the one that reported for that rank, changes
 * nothing. Since the lease is decided on the producer, in one place, when the consumer's
 * notification arrives, a consumer that gets {@code HELD} read blocks that no other
 * request could have had; one that gets anything else (or nothing) fails its pull. A
 * consumer that got no answer sends its done message again
 * ({@link KvConsumer.Builder#confirmationResend}); a repeat is answered as the first was
 * and changes nothing: a lease still held is decided again, and a completed lease is
 * remembered (with the last ended ones) to answer {@code HELD} to a repeat of the very
 * done message of each rank (same agent, same read id), and {@code UNKNOWN}, as before,
 * to any other READ of it.
 *
 * <p>
 * <b>Integrity</b> ({@link KvIntegrity}, {@link KvIntegrity#GENERATION} unless told
 * otherwise). A lease notes the {@link BlockAllocator#generation generation} of each of
 * its blocks, and its parameters carry their digest, which the consumer's notification
 * carries back. The producer answers {@code HELD} only when its blocks' current
 * generations still give that digest (and the consumer's, if it sent one, is the same): a
 * block that was freed and handed out again while leased (the application released it
 * once too often) is answered {@link LeaseConfirmation#STALE}, and the lease ends
 * ({@link LeaseOutcome#STALE}). With {@link KvIntegrity#CRC32C} the producer also
 * computes a CRC32C of every block (per consumer rank's slice of heads) when it takes the
 * lease, and the consumer compares it with what landed ({@link KvIntegrityException}).
 * Whatever ends a lease releases only the blocks still of the lease's generation: one
 * handed out again already lost the lease's reference when it was freed.
 *
 * <p>
 * To answer a consumer the producer needs its metadata: consumers it has not loaded yet
 * are loaded through the {@link PeerLoader}; when that fails, the answer is tried again
 * for up to the peer timeout (a consumer whose entry vanished publishes it again).
 * Notifications are taken with prefix matchers for {@code <prefix>done:} and
 * {@code <prefix>release:} only, so other notifications of the agent stay where they are.
 *
 * <p>
 * A consumer waits for the answer to its read, so the producer answers a consumer whose
 * metadata is loaded at once, on the thread that delivered the notification (the agent's
 * progress loop): deciding the lease and sending the answer take no lock but the
 * producer's own and make no call that waits. Everything else (loading a consumer's
 * metadata, ending a lease's outcome, which runs its dependents, logging) happens on the
 * producer's thread.
 *
 * <p>
 * One daemon thread per producer runs expiries, the rest of the answers and releases;
 * {@link #close()} stops it, and releases the blocks of every lease still held. What one
 * expiry or one answer throws, even an {@link Error}, is logged with its context and
 * counted ({@link #internalErrors()}), and the thread goes on: an expiry releases the
 * lease's blocks and ends its outcome whatever throws on the way.
 */
public final class KvProducer implements AutoCloseable, DrainParticipant {

	private static final System.Logger logger = System.getLogger(KvProducer.class.getName());

	/**
	 * How many ended leases are remembered, to answer a repeated done message as the
	 * first was (HELD for a completed lease), or EXPIRED, RELEASED or STALE, rather than
	 * UNKNOWN.
	 */
	private static final int REMEMBERED_ENDINGS = 4096;

	/**
	 * The pause between two attempts to answer a consumer whose metadata could not be
	 * loaded.
	 */
	private static final Duration ANSWER_RETRY = Duration.ofMillis(200);

	/** The prefix of the protocol's notifications that the short constructors use. */
	public static final String DEFAULT_PREFIX = KvMessages.DEFAULT_PREFIX;

	/** How long loading a peer's metadata may take, unless told otherwise. */
	public static final Duration DEFAULT_PEER_TIMEOUT = Duration.ofSeconds(10);

	/** The longest consumer agent name a lease takes. */
	private static final int MAX_AGENT_NAME = 256;

	/** What leases let consumers check, unless told otherwise. */
	public static final KvIntegrity DEFAULT_INTEGRITY = KvIntegrity.GENERATION;

	private final PagedKvCache cache;

	private final NixlAgent agent;

	private final PeerLoader peers;

	private final String prefix;

	private final Duration peerTimeout;

	private final KvIntegrity integrity;

	private final NotificationMatcher doneMatcher;

	private final NotificationMatcher releaseMatcher;

	private final SecureRandom random = new SecureRandom();

	private final ScheduledThreadPoolExecutor scheduler;

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

	private final List<NotificationSubscription> subscriptions = new ArrayList<>();

	private volatile @Nullable ConsumerWatch consumerWatch;

	private volatile KvObserver observer = KvObserver.NONE;

	private boolean closed;

	/**
	 * How many consumers' notifications are being answered, or have an answer waiting to
	 * be tried again; guarded by the lock.
	 */
	private int answering;

	private volatile @Nullable Thread thread;

	private final AtomicLong internalErrors = new AtomicLong();

	/** Leases ended, by {@link LeaseOutcome#ordinal()}. */
	private final AtomicLongArray outcomes = new AtomicLongArray(LeaseOutcome.values().length);

	/**
	 * Creates a producer with the default notification prefix and peer timeout.
	 * @param cache the cache whose blocks it leases and pushes
	 * @param peers loads the metadata of consumers it has not seen
	 */
	public KvProducer(PagedKvCache cache, PeerLoader peers) {
		this(cache, peers, KvMessages.DEFAULT_PREFIX, DEFAULT_PEER_TIMEOUT);
	}

	/**
	 * Creates a producer.
	 * @param cache the cache whose blocks it leases and pushes
	 * @param peers loads the metadata of consumers it has not seen
	 * @param prefix the prefix of the protocol's notifications (the consumers must use
	 * the same)
	 * @param peerTimeout how long loading a consumer's metadata may take
	 */
	public KvProducer(PagedKvCache cache, PeerLoader peers, String prefix, Duration peerTimeout) {
		this(cache, peers, prefix, peerTimeout, DEFAULT_INTEGRITY);
	}

	/**
	 * Creates a producer that lets its consumers check its blocks as told.
	 * @param cache the cache whose blocks it leases and pushes
	 * @param peers loads the metadata of consumers it has not seen
	 * @param prefix the prefix of the protocol's notifications (the consumers must use
	 * the same)
	 * @param peerTimeout how long loading a consumer's metadata may take
	 * @param integrity what its leases let consumers check
	 */
	public KvProducer(PagedKvCache cache, PeerLoader peers, String prefix, Duration peerTimeout,
			KvIntegrity integrity) {
		this.cache = Objects.requireNonNull(cache, "cache");
		this.integrity = Objects.requireNonNull(integrity, "integrity");
		this.agent = cache.agent();
		this.peers = Objects.requireNonNull(peers, "peers");
		KvMessages.requirePrefix(prefix);
		this.prefix = prefix;
		this.peerTimeout = SettingChecks.requirePositive(peerTimeout, "peerTimeout");
		this.doneMatcher = NotificationMatcher.prefix(null, KvMessages.donePrefix(prefix));
		this.releaseMatcher = NotificationMatcher.prefix(null, KvMessages.releasePrefix(prefix));
		String threadName = "nixl4j-kv-producer-" + this.agent.name();
		this.scheduler = new ScheduledThreadPoolExecutor(1, runnable -> {
			Thread thread = new Thread(runnable, threadName);
			thread.setDaemon(true);
			this.thread = thread;
			return thread;
		});
		this.scheduler.setRemoveOnCancelPolicy(true);
		this.scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
		subscribe(this.doneMatcher);
		subscribe(this.releaseMatcher);
	}

	/**
	 * Returns the cache.
	 * @return the cache
	 */
	public PagedKvCache cache() {
		return this.cache;
	}

	/**
	 * Returns what its leases let consumers check.
	 * @return the integrity
	 */
	public KvIntegrity integrity() {
		return this.integrity;
	}

	/**
	 * Returns what consumers need to address this producer's cache (send it once per
	 * consumer).
	 * @return the handle
	 */
	public RemoteCacheHandle handle() {
		return this.cache.handle();
	}

	/**
	 * Holds a request's blocks for consumers to pull: retains each block once (the caller
	 * keeps its own references and may release them at once) until every consumer rank
	 * has reported its read, or until the lease expires.
	 * @param requestId the request (no {@code ':'}), at most one lease at a time per
	 * request
	 * @param blockIds the request's blocks, distinct, allocated, in token order
	 * @param consumerRanks how many consumer ranks each read a slice of heads (1 when
	 * both sides use the same tensor parallelism)
	 * @param ttl how long the blocks are held at most
	 * @return the lease, whose {@link KvLease#params()} go to the consumer; with
	 * {@link KvIntegrity#CRC32C} they carry the checksums of the blocks as they are now,
	 * so the request's blocks must hold their final data before the lease is taken
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for bad blocks, a
	 * request that already has a lease, or ranks the layout cannot be split over;
	 * {@link NixlStatus#CLOSED}
	 */
	public KvLease lease(String requestId, int[] blockIds, int consumerRanks, Duration ttl) {
		return lease(requestId, blockIds, consumerRanks, ttl, null);
	}

	/**
	 * Holds a request's blocks for one consumer to pull, as
	 * {@link #lease(String, int[], int, Duration)} does, and ends the lease
	 * ({@link LeaseOutcome#RELEASED}) as soon as that consumer is known to be gone
	 * ({@link #releaseLeasesOf}), rather than at its time to live: when its entry leaves
	 * the exchange that {@link #watchConsumers} watches, for example.
	 * @param requestId the request
	 * @param blockIds the request's blocks, distinct, allocated, in token order
	 * @param consumerRanks how many consumer ranks each read a slice of heads
	 * @param ttl how long the blocks are held at most
	 * @param consumer the consumer's agent, or {@code null} for any
	 * @return the lease
	 * @throws NixlException as {@link #lease(String, int[], int, Duration)} does
	 */
	public KvLease lease(String requestId, int[] blockIds, int consumerRanks, Duration ttl, @Nullable String consumer) {
		SettingChecks.requirePositive(ttl, "ttl");
		if (consumer != null && (consumer.isBlank() || consumer.length() > MAX_AGENT_NAME)) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "kv_lease", this.agent.name(), null,
					"the consumer's agent name must be 1 to " + MAX_AGENT_NAME + " characters, was "
							+ consumer.length());
		}
		PagedKvCache.requireBlocks("kv_lease", blockIds, this.cache.layout().numBlocks(), "this cache");
		PagedKvCache.requireDistinct("kv_lease", blockIds, "the leased blocks");
		KvTransferParams params;
		try {
			this.cache.layout().headSlice(consumerRanks);
			params = new KvTransferParams(this.agent.name(), requestId, toList(blockIds),
					this.cache.layout().fingerprint(), 0, consumerRanks);
		}
		catch (IllegalArgumentException ex) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "kv_lease", this.agent.name(), null,
					Objects.requireNonNullElse(ex.getMessage(), ex.toString()), ex);
		}
		// Computed before the blocks are retained, outside the lock, so that answering
		// consumers does not wait for it; a block freed and handed out again meanwhile
		// fails the consumer's check.
		List<Integer> checksums = (this.integrity == KvIntegrity.CRC32C) ? checksums(blockIds, consumerRanks)
				: List.of();
		KvLease lease;
		synchronized (this.lock) {
			requireOpen("kv_lease");
			if (this.leases.containsKey(requestId)) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "kv_lease", this.agent.name(), null,
						"request '" + requestId + "' already holds a lease");
			}
			this.cache.allocator().retain(blockIds);
			long[] generations = this.cache.allocator().generations(blockIds);
			long digest = (this.integrity != KvIntegrity.NONE) ? BlockAllocator.digest(blockIds, generations)
					: KvMessages.NO_GENERATION;
			long id = newLeaseId();
			lease = new KvLease(new KvTransferParams(params.producerAgent(), requestId, params.blockIds(),
					params.layoutFingerprint(), id, consumerRanks, digest, checksums,
					this.cache.handle().incarnation()), generations, ttl, consumer);
			this.leases.put(requestId, lease);
			lease.expiry(this.scheduler.schedule(() -> expire(lease), ttl.toNanos(), TimeUnit.NANOSECONDS));
		}
		ConsumerWatch watch = this.consumerWatch;
		if (consumer != null && watch != null) {
			watch.watch(consumer);
		}
		KvTraceContext trace = this.observer.leaseTaken(lease);
		if (trace != null) {
			lease.traceContext(trace);
		}
		return lease;
	}

	/**
	 * Sets what observes this producer's leases and answers (default
	 * {@link KvObserver#NONE}): each lease taken, whose parameters then carry the trace
	 * context the observer gives, and each answer to a consumer's done message, with the
	 * trace context of the consumer's pull. Set it before the first lease.
	 * @param observer the observer
	 * @return this producer
	 */
	public KvProducer observer(KvObserver observer) {
		this.observer = Objects.requireNonNull(observer, "observer");
		return this;
	}

	/**
	 * Ends every lease taken for a consumer that is gone ({@link LeaseOutcome#RELEASED}),
	 * so that its blocks return to the pool at once instead of at the leases' time to
	 * live. A consumer rank of those leases still reading is answered
	 * {@link LeaseConfirmation#RELEASED}.
	 * @param consumer the consumer's agent
	 * @return how many leases ended
	 */
	public int releaseLeasesOf(String consumer) {
		List<KvLease> released = new ArrayList<>();
		List<Integer> reused = new ArrayList<>();
		synchronized (this.lock) {
			for (Iterator<KvLease> it = this.leases.values().iterator(); it.hasNext();) {
				KvLease lease = it.next();
				if (lease.consumer().filter(consumer::equals).isPresent()) {
					it.remove();
					lease.cancelExpiry();
					this.ended.put(lease.id(), Ending.of(LeaseConfirmation.RELEASED));
					reused.add(releaseBlocks(lease));
					released.add(lease);
				}
			}
			if (!released.isEmpty()) {
				this.lock.notifyAll();
			}
		}
		if (!released.isEmpty()) {
			logger.log(Level.INFO,
					"KV producer of agent ''{0}'' released {1} leases of consumer ''{2}'', which is gone",
					this.agent.name(), released.size(), consumer);
		}
		for (int i = 0; i < released.size(); i++) {
			reportReused(released.get(i), reused.get(i));
			end(released.get(i), LeaseOutcome.RELEASED);
		}
		return released.size();
	}

	/**
	 * Watches, in an exchange, every consumer that a lease names
	 * ({@link #lease(String, int[], int, Duration, String)}): when its entry is withdrawn
	 * or expires (its process stopped, or died and its entry's time to live ran out), its
	 * leases are released ({@link #releaseLeasesOf}). Up to
	 * {@link ConsumerWatch#MAX_WATCHED} consumers are watched at once; the watches end
	 * when the producer closes.
	 * @param exchange the exchange the consumers publish their metadata in
	 * @return this producer
	 */
	public KvProducer watchConsumers(MetadataExchange exchange) {
		synchronized (this.lock) {
			requireOpen("kv_watch");
			if (this.consumerWatch != null) {
				throw new IllegalStateException(
						"the KV producer of agent '" + this.agent.name() + "' watches its consumers already");
			}
			this.consumerWatch = new ConsumerWatch(exchange, this::releaseLeasesOf);
		}
		return this;
	}

	/**
	 * The CRC32C of every block's slice of heads for every consumer rank: entry
	 * {@code s * n + i} covers slice {@code s} of block {@code blockIds[i]}.
	 */
	private List<Integer> checksums(int[] blockIds, int consumerRanks) {
		List<Integer> checksums = new ArrayList<>(blockIds.length * consumerRanks);
		for (int s = 0; s < consumerRanks; s++) {
			for (int id : blockIds) {
				checksums.add(this.cache.crc32c(id, consumerRanks, s));
			}
		}
		return checksums;
	}

	/**
	 * Releases the lease's reference on each of its blocks still of the generation it
	 * noted. Under the lock.
	 * @return how many blocks were handed out again while leased
	 */
	private int releaseBlocks(KvLease lease) {
		return this.cache.allocator().releaseOfGeneration(lease.blockIds(), lease.generations());
	}

	/** Logs blocks that were handed out again while a lease held them. */
	private void reportReused(KvLease lease, int reused) {
		if (reused > 0) {
			logger.log(Level.WARNING,
					"KV lease of request ''{0}'' (lease {1}) on agent ''{2}'': {3} of its {4} blocks were freed and"
							+ " handed out again while leased (released once too often); they were left to their new"
							+ " owner",
					lease.requestId(), Long.toString(lease.id()), this.agent.name(), reused, lease.blockIds().length);
		}
	}

	/**
	 * Returns the number of leases held now.
	 * @return the count
	 */
	public int activeLeases() {
		synchronized (this.lock) {
			return this.leases.size();
		}
	}

	/**
	 * Returns how many leases ended in an outcome.
	 * @param outcome the outcome
	 * @return the count since this producer was created
	 */
	public long endedLeases(LeaseOutcome outcome) {
		return this.outcomes.get(outcome.ordinal());
	}

	/**
	 * Returns how many blocks the leases held now lease, a block counted once per lease
	 * that holds it.
	 * @return the count
	 */
	public int leasedBlocks() {
		synchronized (this.lock) {
			int blocks = 0;
			for (KvLease lease : this.leases.values()) {
				blocks += lease.blockIds().length;
			}
			return blocks;
		}
	}

	private void end(KvLease lease, LeaseOutcome outcome) {
		if (lease.end(outcome)) {
			this.outcomes.incrementAndGet(outcome.ordinal());
		}
	}

	/**
	 * Waits for the leases to end, as {@link #awaitLeasesEnded}: a
	 * {@link dev.nixl4j.Drain} waits with it for the consumers still reading leased
	 * blocks.
	 * @param timeout how long to wait at most
	 * @return {@code true} when no lease is left
	 */
	@Override
	public boolean awaitDrained(Duration timeout) {
		return awaitLeasesEnded(timeout);
	}

	/**
	 * Describes the leases held now.
	 * @return {@code "<n> KV lease(s)"}
	 */
	@Override
	public String pendingWork() {
		return activeLeases() + " KV lease(s)";
	}

	/**
	 * Waits until no lease is held and the last consumer's confirmation has been sent:
	 * for a graceful stop that lets the reads of leased blocks finish before the producer
	 * closes. Leases end when their consumers confirm, when they expire or when the
	 * producer closes.
	 * @param timeout how long to wait at most
	 * @return {@code true} when no lease is left, {@code false} when the time ran out
	 * first
	 */
	public boolean awaitLeasesEnded(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		synchronized (this.lock) {
			// closing drops the answers waiting to be tried again
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
	 * Pushes blocks into a consumer's cache with a WRITE whose notification,
	 * {@code <prefix>push:<request>}, tells the consumer they landed. The local blocks
	 * are retained while the WRITE runs.
	 * @param params the consumer's request: its agent, request id, blocks and layout
	 * fingerprint
	 * @param consumer the consumer's cache handle
	 * @param localBlockIds this cache's blocks, in the order of {@code params.blockIds()}
	 * @param timeout how long the WRITE may take
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for mismatched layouts
	 * or bad blocks, {@link NixlStatus#TIMEOUT}, or the failure of the transfer
	 */
	public void push(KvPushParams params, RemoteCacheHandle consumer, int[] localBlockIds, Duration timeout) {
		SettingChecks.requirePositive(timeout, "timeout");
		String peer = consumer.agentName();
		if (!params.consumerAgent().equals(peer)) {
			throw invalid("kv_push", peer,
					"the push names consumer '" + params.consumerAgent() + "' but the handle is of '" + peer + "'");
		}
		String own = this.cache.layout().fingerprint();
		if (!params.layoutFingerprint().equals(consumer.layout().fingerprint())
				|| !own.equals(params.layoutFingerprint())) {
			throw invalid("kv_push", peer, "layout mismatch: this cache is " + own + ", the consumer's push names "
					+ params.layoutFingerprint() + " and its handle " + consumer.layout().fingerprint());
		}
		int[] remoteIds = params.blockIdArray();
		if (localBlockIds.length != remoteIds.length) {
			throw invalid("kv_push", peer,
					localBlockIds.length + " local blocks for " + remoteIds.length + " consumer blocks");
		}
		PagedKvCache.requireBlocks("kv_push", localBlockIds, this.cache.layout().numBlocks(), "this cache");
		PagedKvCache.requireBlocks("kv_push", remoteIds, consumer.layout().numBlocks(), "consumer '" + peer + "'");
		PagedKvCache.requireDistinct("kv_push", remoteIds, "the consumer's blocks");
		this.peers.load(this.agent, peer, this.peerTimeout);
		this.cache.allocator().retain(localBlockIds);
		try (Transfer transfer = this.cache.createBlockTransfer(XferOp.WRITE, localBlockIds, consumer, 1, 0, remoteIds,
				KvMessages.push(this.prefix, params.requestId()).getBytes(StandardCharsets.UTF_8))) {
			transfer.post();
			transfer.await(timeout);
		}
		finally {
			this.cache.allocator().release(localBlockIds);
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

	/**
	 * Takes the consumers' notifications as they arrive, ahead of anything waiting in the
	 * agent's mailbox.
	 */
	private void subscribe(NotificationMatcher matcher) {
		synchronized (this.lock) {
			try {
				this.subscriptions.add(this.agent.subscribeNotifications(matcher, (matcher == this.doneMatcher)
						? this::onDone : (notification) -> handOver(() -> received(matcher, notification))));
			}
			catch (NixlException ex) {
				logger.log(Level.WARNING, "KV producer of agent ''{0}'' stops answering consumers: {1}",
						this.agent.name(), ex.getMessage());
			}
		}
	}

	/**
	 * Runs the rest of the work on the producer's thread. A rejected hand-over (the
	 * producer closed meanwhile) must not reach the thread that completed the wait: that
	 * is the agent's progress loop.
	 */
	private boolean handOver(Runnable task) {
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
	 * A consumer reported its read: answered at once, on the delivering thread, when its
	 * metadata is loaded; else on the producer's thread, which may load it first.
	 * Whatever throws here is caught: the delivering thread would drop it unseen.
	 */
	private void onDone(Notification notification) {
		if (!this.agent.hasRemoteMetadata(notification.remoteAgent())) {
			handOver(() -> received(this.doneMatcher, notification));
			return;
		}
		startAnswering();
		Answer decided = null;
		try {
			decided = decide(notification);
			if (decided != null) {
				this.agent.sendNotification(decided.consumer(), decided.ack());
				decided.step().end(decided.confirmation(), null);
			}
		}
		catch (RuntimeException | Error ex) {
			if (decided != null) {
				decided.step().end(decided.confirmation(), ex);
			}
			couldNotAnswer(notification.remoteAgent(), "", ex);
		}
		Answer answer = decided;
		Runnable rest = () -> {
			try {
				if (answer != null) {
					concluded(answer);
				}
			}
			finally {
				answered();
			}
		};
		if (!handOver(rest)) {
			answered();
		}
	}

	private void received(NotificationMatcher matcher, Notification notification) {
		startAnswering();
		try {
			if (matcher == this.releaseMatcher) {
				release(notification);
			}
			else {
				answer(notification);
			}
		}
		catch (RuntimeException | Error ex) {
			couldNotAnswer(notification.remoteAgent(), "", ex);
		}
		finally {
			answered();
		}
	}

	/**
	 * Logs and counts what one unit of work of the producer's thread threw; the thread
	 * goes on.
	 */
	private void survived(String unit, Throwable error) {
		long count = this.internalErrors.incrementAndGet();
		logger.log(Level.ERROR, "KV producer of agent '" + this.agent.name() + "': " + unit
				+ " threw; its thread goes on (errors so far: " + count + ")", error);
	}

	/**
	 * Returns how many times one unit of work of the producer's thread (a lease's expiry,
	 * the answer to a consumer) threw an {@link Error} and the thread went on. Each was
	 * logged once, with its context.
	 * @return the count
	 */
	public long internalErrors() {
		return this.internalErrors.get();
	}

	/**
	 * What a consumer's done message decided: the lease's state at that moment, and the
	 * lease it ended ({@code ended}, how in {@code outcome}), if any, with the number of
	 * its blocks that had been handed out again.
	 */
	private record Answer(String consumer, KvMessages.Done done, LeaseConfirmation confirmation,
			@Nullable KvLease ended, LeaseOutcome outcome, int reused, byte[] ack, KvObserver.Step step) {
	}

	private void answer(Notification notification) {
		Answer answer = decide(notification);
		if (answer == null) {
			return;
		}
		Throwable failure = null;
		try {
			sendAck(answer.consumer(), answer.ack(), System.nanoTime() + this.peerTimeout.toNanos());
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			answer.step().end(answer.confirmation(), failure);
			concluded(answer);
		}
	}

	/**
	 * Decides a consumer's report against the lease it names, releasing the lease's
	 * blocks when it was the last rank; {@code null} for a malformed message.
	 */
	private @Nullable Answer decide(Notification notification) {
		String consumer = notification.remoteAgent();
		KvMessages.Done done = KvMessages.parseDone(this.prefix, notification.text());
		if (done == null) {
			logger.log(Level.WARNING,
					"KV producer of agent ''{0}'' ignored a malformed notification of {1} bytes from ''{2}''",
					this.agent.name(), notification.message().length, consumer);
			return null;
		}
		KvObserver.Step step = this.observer.confirming(consumer, done.requestId(), done.leaseId(), done.trace());
		LeaseConfirmation confirmation;
		KvLease ended = null;
		LeaseOutcome outcome = LeaseOutcome.COMPLETED;
		int reused = 0;
		synchronized (this.lock) {
			KvLease lease = held(done);
			if (lease != null && isStale(lease, done)) {
				confirmation = LeaseConfirmation.STALE;
				outcome = LeaseOutcome.STALE;
				this.leases.remove(done.requestId());
				lease.cancelExpiry();
				this.ended.put(lease.id(), Ending.of(LeaseConfirmation.STALE));
				reused = releaseBlocks(lease);
				this.lock.notifyAll();
				ended = lease;
			}
			else if (lease != null) {
				confirmation = LeaseConfirmation.HELD;
				lease.claim(done.rank(), consumer);
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
				confirmation = (ending != null) ? ending.answer(done, consumer) : LeaseConfirmation.UNKNOWN;
			}
		}
		return new Answer(consumer, done, confirmation, ended, outcome, reused,
				KvMessages.ack(this.prefix, done.requestId(), done.leaseId(), done.rank(), confirmation), step);
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
	 * Ends the outcome of a lease the answer completed, and logs an answer that was not
	 * {@link LeaseConfirmation#HELD}.
	 */
	private void concluded(Answer answer) {
		KvLease ended = answer.ended();
		if (ended != null) {
			reportReused(ended, answer.reused());
			end(ended, answer.outcome());
		}
		if (answer.confirmation() != LeaseConfirmation.HELD) {
			logger.log(Level.INFO,
					"KV producer of agent ''{0}'' answers {1} to ''{2}'' for request ''{3}'' (lease {4})",
					this.agent.name(), answer.confirmation(), answer.consumer(), answer.done().requestId(),
					Long.toString(answer.done().leaseId()));
		}
	}

	/**
	 * Sends an answer; while the consumer's metadata cannot be loaded, tries again until
	 * the deadline.
	 */
	private void sendAck(String consumer, byte[] ack, long deadline) {
		try {
			this.peers.load(this.agent, consumer, this.peerTimeout);
		}
		catch (NixlException ex) {
			if (deadline - System.nanoTime() <= 0 || !this.agent.isOpen()) {
				throw ex;
			}
			logger.log(Level.DEBUG, "KV producer of agent ''{0}'' cannot reach ''{1}'' yet, trying again: {2}",
					this.agent.name(), consumer, ex.getMessage());
			// counted until it is sent or given up, so that awaitLeasesEnded waits for it
			startAnswering();
			try {
				this.scheduler.schedule(() -> {
					try {
						sendAck(consumer, ack, deadline);
					}
					catch (RuntimeException | Error failure) {
						// the scheduler would hide it in the task's future
						couldNotAnswer(consumer, " again", failure);
					}
					finally {
						answered();
					}
				}, ANSWER_RETRY.toNanos(), TimeUnit.NANOSECONDS);
			}
			catch (RejectedExecutionException closed) {
				answered();
				logger.log(Level.DEBUG, "KV producer closed before answering ''{0}''", consumer);
			}
			return;
		}
		this.agent.sendNotification(consumer, ack);
	}

	private void startAnswering() {
		synchronized (this.lock) {
			this.answering++;
		}
	}

	/**
	 * Reports what answering a consumer threw: a failure is logged, an {@link Error}
	 * logged and counted as survived (the unit named with {@code again} appended);
	 * neither is thrown on.
	 */
	private void couldNotAnswer(String consumer, String again, Throwable failure) {
		if (failure instanceof Error error) {
			survived("answering '" + consumer + "'" + again, error);
		}
		else {
			logger.log(Level.WARNING, "KV producer of agent ''{0}'' could not answer ''{1}'': {2}", this.agent.name(),
					consumer, failure.toString());
		}
	}

	private void answered() {
		synchronized (this.lock) {
			this.answering--;
			this.lock.notifyAll();
		}
	}

	/**
	 * The lease a done or release message names, if it is held and the rank is one of
	 * its.
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
	 * Ends a lease a consumer gave back. A release of a lease not held (ended, never
	 * made, a wrong id) or from another agent than the one that reported for that rank
	 * changes nothing.
	 */
	private void release(Notification notification) {
		String consumer = notification.remoteAgent();
		KvMessages.Done release = KvMessages.parseRelease(this.prefix, notification.text());
		if (release == null) {
			logger.log(Level.WARNING,
					"KV producer of agent ''{0}'' ignored a malformed notification of {1} bytes from ''{2}''",
					this.agent.name(), notification.message().length, consumer);
			return;
		}
		KvLease released;
		int reused = 0;
		synchronized (this.lock) {
			KvLease lease = held(release);
			if (lease == null || !lease.claim(release.rank(), consumer)) {
				released = null;
			}
			else {
				this.leases.remove(release.requestId());
				lease.cancelExpiry();
				this.ended.put(lease.id(), Ending.of(LeaseConfirmation.RELEASED));
				reused = releaseBlocks(lease);
				this.lock.notifyAll();
				released = lease;
			}
		}
		if (released == null) {
			logger.log(Level.INFO,
					"KV producer of agent ''{0}'' ignored a release of request ''{1}'' (lease {2}) from ''{3}'':"
							+ " no such lease is held for that agent",
					this.agent.name(), release.requestId(), Long.toString(release.leaseId()), consumer);
			return;
		}
		logger.log(Level.DEBUG, "KV lease of request ''{0}'' (lease {1}) released by ''{2}''", release.requestId(),
				Long.toString(release.leaseId()), consumer);
		reportReused(released, reused);
		end(released, LeaseOutcome.RELEASED);
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
					this.ended.put(lease.id(), Ending.of(LeaseConfirmation.EXPIRED));
				}
				finally {
					this.lock.notifyAll();
				}
			}
			logger.log(Level.WARNING,
					"KV lease of request ''{0}'' (lease {1}) on agent ''{2}'' expired after {3} with {4} of {5} consumer"
							+ " ranks done; its {6} blocks were released",
					lease.requestId(), Long.toString(lease.id()), this.agent.name(), lease.ttl(), lease.doneCount(),
					lease.params().consumerRanks(), lease.blockIds().length);
			reportReused(lease, reused);
		}
		catch (Throwable ex) {
			survived("the expiry of the lease of request '" + lease.requestId() + "'", ex);
		}
		finally {
			if (removed) {
				end(lease, LeaseOutcome.EXPIRED);
			}
		}
	}

	/**
	 * How a lease ended, remembered to answer a done message that comes after: a
	 * consumer's repeat when the answer to its first was lost, or a rank late past an
	 * expiry or release. A completed lease keeps what makes a repeat answerable
	 * {@code HELD}: its generation digest, and the agent and the read id of the done
	 * message that reported each rank.
	 */
	private record Ending(LeaseConfirmation confirmation, long generation, @Nullable String[] claimants, long[] reads) {

		static Ending of(LeaseConfirmation confirmation) {
			return new Ending(confirmation, KvMessages.NO_GENERATION, new String[0], new long[0]);
		}

		static Ending completed(KvLease lease) {
			return new Ending(LeaseConfirmation.HELD, lease.params().generation(), lease.claimants(), lease.reads());
		}

		/**
		 * The answer to a done message naming the lease. A repeat of the done message
		 * that reported a completed lease's rank (same agent, same read id) is
		 * {@code HELD} as the first was, that one having been decided while the blocks
		 * were held; anything else (another READ of the lease, which may have read the
		 * blocks after they were released, a consumer that names no READ, another agent)
		 * is {@code UNKNOWN}, and a repeat under another generation digest {@code STALE}.
		 */
		LeaseConfirmation answer(KvMessages.Done done, String consumer) {
			if (this.confirmation != LeaseConfirmation.HELD) {
				return this.confirmation;
			}
			int rank = done.rank();
			if (rank < 0 || rank >= this.claimants.length || !consumer.equals(this.claimants[rank])
					|| done.read() == KvMessages.NO_READ || done.read() != this.reads[rank]) {
				return LeaseConfirmation.UNKNOWN;
			}
			if (done.generation() != KvMessages.NO_GENERATION && done.generation() != this.generation) {
				return LeaseConfirmation.STALE;
			}
			return LeaseConfirmation.HELD;
		}

	}

	private void requireOpen(String operation) {
		if (this.closed) {
			throw new NixlException(NixlStatus.CLOSED, operation, this.agent.name(), null, "the KV producer is closed");
		}
	}

	private NixlException invalid(String operation, String peer, String detail) {
		return new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, this.agent.name(), peer, detail);
	}

	private static List<Integer> toList(int[] ids) {
		List<Integer> list = new ArrayList<>(ids.length);
		for (int id : ids) {
			list.add(id);
		}
		return list;
	}

	/**
	 * Stops answering consumers, stops the producer's thread and releases the blocks of
	 * every lease still held (their outcome is {@link LeaseOutcome#CLOSED}; consumers
	 * still reading get no confirmation and fail). Closing twice is harmless; the cache
	 * stays open.
	 */
	@Override
	public void close() {
		List<KvLease> held;
		int[] reused;
		synchronized (this.lock) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			this.subscriptions.forEach(NotificationSubscription::close);
			this.subscriptions.clear();
			if (this.consumerWatch != null) {
				this.consumerWatch.close();
			}
			held = new ArrayList<>(this.leases.values());
			this.leases.clear();
			this.lock.notifyAll();
			reused = new int[held.size()];
			for (int i = 0; i < held.size(); i++) {
				held.get(i).cancelExpiry();
				reused[i] = releaseBlocks(held.get(i));
			}
		}
		this.scheduler.shutdownNow();
		for (int i = 0; i < held.size(); i++) {
			reportReused(held.get(i), reused[i]);
			end(held.get(i), LeaseOutcome.CLOSED);
		}
		try {
			if (Thread.currentThread() != this.thread && !this.scheduler.awaitTermination(10, TimeUnit.SECONDS)) {
				logger.log(Level.WARNING, "KV producer thread of agent ''{0}'' did not stop within 10 s",
						this.agent.name());
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
