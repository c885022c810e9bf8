package dev.nixl4j.kv;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.nixl4j.DrainParticipant;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.SettingChecks;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import org.jspecify.annotations.Nullable;

/**
 * The prefill side of a KV block transfer: it leases a request's blocks to consumers that
 * pull them, and pushes blocks into consumers' caches. Built with {@link #builder}.
 *
 * <p>
 * Given the exchange its peers publish in ({@link Builder#exchange}), the producer
 * publishes its agent's metadata there with its cache's handle beside it, keeps both
 * published for its life and withdraws them when it closes:
 *
 * <pre>{@code
 * KvProducer producer = KvProducer.builder(cache).exchange(exchange).build();
 * int[] blocks = cache.allocator().allocate(n);
 * // ... the request's prefill writes its KV into the blocks ...
 * KvLease lease = producer.lease(requestId, blocks);
 * send(lease.params().toJson());
 * }</pre>
 *
 * <p>
 * {@link #lease} takes over the caller's references on the request's blocks and returns
 * the {@link KvTransferParams} a consumer needs; the producer answers each consumer
 * rank's done message with whether the lease still held the blocks, and releases them
 * when every rank has reported, when a consumer gives the lease back, when the lease
 * expires, or when the producer closes. What the messages carry, how a lease is decided,
 * why a consumer told {@code HELD} read blocks no other request could have had, how
 * repeats and integrity checks are answered and which thread does what:
 * docs/architecture.md, section "KV cache".
 *
 * <p>
 * A lease ends only by its consumer: the agent its
 * {@linkplain KvLease.Options#consumer(String) options} name, and in any case the first
 * agent that reported for a rank (see {@link KvLease.Options} for why that is safe). A
 * done or release message about a lease held (or one that ended lately) from any other
 * agent changes nothing, is not answered, and is counted ({@link #ignoredMessages()}).
 * The sender's name is the one the engine reports, which neither engine authenticates:
 * see docs/operations.md, section "KV leases".
 *
 * <p>
 * Consumers' messages are decided on the thread that delivers them, without waiting, and
 * answered there when the consumer's metadata is loaded. An answer to a consumer whose
 * metadata is not loaded waits, bounded per sender and in total, while threads of its own
 * look the consumer up ({@link #pendingAnswers()}, {@link #droppedAnswers()}). One daemon
 * thread per producer runs expiries and ends the leases' outcomes, and never waits for a
 * peer; {@link #close()} stops it, and releases the blocks of every lease still held.
 * What one expiry or one answer throws, even an {@link Error}, is logged with its context
 * and counted ({@link #internalErrors()}), and the thread goes on.
 */
public final class KvProducer implements AutoCloseable, DrainParticipant {

	private static final System.Logger logger = System.getLogger(KvProducer.class.getName());

	/** The prefix of the protocol's notifications, unless told otherwise. */
	public static final String DEFAULT_PREFIX = KvMessages.DEFAULT_PREFIX;

	/** How long a lease holds its blocks at most, unless told otherwise. */
	public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(30);

	/** How long loading a peer's metadata may take, unless told otherwise. */
	public static final Duration DEFAULT_PEER_TIMEOUT = Duration.ofSeconds(10);

	/** What leases let consumers check, unless told otherwise. */
	public static final KvIntegrity DEFAULT_INTEGRITY = KvIntegrity.GENERATION;

	/**
	 * The most answers that wait for their consumers' metadata at once; past it, or past
	 * {@value #MAX_PENDING_ANSWERS_PER_CONSUMER} for one consumer or answers to
	 * {@value #MAX_PENDING_ANSWER_CONSUMERS} consumers, an answer is dropped at once.
	 */
	public static final int MAX_PENDING_ANSWERS = PendingAnswers.MAX_ANSWERS;

	/** The most answers that wait for one consumer's metadata at once. */
	public static final int MAX_PENDING_ANSWERS_PER_CONSUMER = PendingAnswers.MAX_PER_SENDER;

	/** The most consumers whose answers wait for their metadata at once. */
	public static final int MAX_PENDING_ANSWER_CONSUMERS = PendingAnswers.MAX_SENDERS;

	/**
	 * How long an answer may wait for its consumer's metadata before the producer's
	 * answers count as backed up ({@link #answersBackedUp()}): the metadata of a consumer
	 * that published it is found within milliseconds.
	 */
	public static final Duration ANSWER_BACKLOG_AGE = Duration.ofSeconds(1);

	private final PagedKvCache cache;

	private final NixlAgent agent;

	private final PeerLoader peers;

	private final String prefix;

	private final Duration peerTimeout;

	private final KvIntegrity integrity;

	private final KvObserver observer;

	private final LeaseThread thread;

	private final LeaseTable leases;

	private final ConsumerAnswers answers;

	private final @Nullable ConsumerWatch consumerWatch;

	private final Duration leaseTtl;

	private final @Nullable MetadataPublication publication;

	private KvProducer(Builder builder, PeerLoader peers, @Nullable MetadataExchange consumers,
			@Nullable MetadataPublication publication) {
		this.cache = builder.cache;
		this.agent = this.cache.agent();
		this.peers = peers;
		KvMessages.requirePrefix(builder.prefix);
		this.prefix = builder.prefix;
		this.peerTimeout = SettingChecks.requirePositive(builder.peerTimeout, "peerTimeout");
		this.integrity = builder.integrity;
		this.leaseTtl = SettingChecks.requirePositive(builder.leaseTtl, "leaseTtl");
		this.publication = publication;
		this.observer = builder.observer;
		this.thread = new LeaseThread(this.agent.name());
		this.leases = new LeaseTable(this.cache, this.prefix, this.integrity, this.thread);
		this.consumerWatch = (consumers != null) ? new ConsumerWatch(consumers, this.leases::releaseLeasesOf) : null;
		this.answers = new ConsumerAnswers(this.agent, peers, this.prefix, this.peerTimeout, this.observer, this.leases,
				this.thread);
	}

	/**
	 * Starts a producer of a cache's blocks.
	 * @param cache the cache whose blocks it leases and pushes
	 * @return the builder
	 */
	public static Builder builder(PagedKvCache cache) {
		return new Builder(cache);
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
	 * Returns how long a lease holds its blocks at most when its options name no time to
	 * live.
	 * @return the time to live
	 */
	public Duration leaseTtl() {
		return this.leaseTtl;
	}

	/**
	 * Holds a request's blocks for one consumer rank to pull, for the producer's
	 * {@linkplain #leaseTtl() time to live}, bound to the first agent that reports for
	 * it: {@code lease(requestId, blockIds, KvLease.options())}.
	 * @param requestId the request (no {@code ':'}), at most one lease at a time per
	 * request
	 * @param blockIds the request's blocks, distinct, allocated, in token order; the
	 * lease takes over the caller's reference on each
	 * @return the lease, whose {@link KvLease#params()} go to the consumer
	 * @throws NixlException as {@link #lease(String, int[], KvLease.Options)} does
	 */
	public KvLease lease(String requestId, int[] blockIds) {
		return lease(requestId, blockIds, KvLease.options());
	}

	/**
	 * Holds a request's blocks for consumers to pull. The lease takes over the caller's
	 * reference on each block (one reference per block, as
	 * {@link BlockAllocator#allocate} gives it): the caller does not release the blocks
	 * itself, and they go back to the pool when the lease ends, when every consumer rank
	 * has reported its read, a consumer gives the lease back, the lease expires or the
	 * producer closes. A caller that needs a block beyond the lease retains it once more
	 * ({@link BlockAllocator#retain}) before. When {@code lease} throws, the references
	 * stay the caller's.
	 *
	 * <p>
	 * The first agent that reports for a rank is that rank's consumer: messages of other
	 * agents for it are ignored ({@link KvLease.Options} says why that is safe). Options
	 * naming the consumer keep any other agent from ending the lease first, and end it as
	 * soon as that consumer is known to be gone.
	 * @param requestId the request (no {@code ':'}), at most one lease at a time per
	 * request
	 * @param blockIds the request's blocks, distinct, allocated, in token order
	 * @param options the time to live, consumer ranks and consumer, where they differ
	 * from {@link KvLease#options()}
	 * @return the lease, whose {@link KvLease#params()} go to the consumer; with
	 * {@link KvIntegrity#CRC32C} they carry the checksums of the blocks as they are now,
	 * so the request's blocks must hold their final data before the lease is taken
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for bad or free
	 * blocks, a request that already has a lease, or ranks the layout cannot be split
	 * over; {@link NixlStatus#CLOSED}
	 */
	public KvLease lease(String requestId, int[] blockIds, KvLease.Options options) {
		Objects.requireNonNull(options, "options");
		Duration ttl = options.ttl().orElse(this.leaseTtl);
		String consumer = options.consumer().orElse(null);
		int consumerRanks = options.consumerRanks();
		PagedKvCache.requireBlocks("kv_lease", blockIds, this.cache.layout().numBlocks(), "this cache");
		PagedKvCache.requireDistinct("kv_lease", blockIds, "the leased blocks");
		KvTransferParams params;
		try {
			this.cache.layout().headSlice(consumerRanks);
			params = KvTransferParams.builder()
				.producerAgent(this.agent.name())
				.requestId(requestId)
				.blockIds(blockIds)
				.layoutFingerprint(this.cache.layout().fingerprint())
				.consumerRanks(consumerRanks)
				.build();
		}
		catch (IllegalArgumentException ex) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "kv_lease", this.agent.name(), null,
					Objects.requireNonNullElse(ex.getMessage(), ex.toString()), ex);
		}
		// Computed before the lease holds the blocks, outside the lock, so that answering
		// consumers does not wait for it; a block freed and handed out again meanwhile
		// fails the consumer's check.
		List<Integer> checksums = (this.integrity == KvIntegrity.CRC32C) ? checksums(blockIds, consumerRanks)
				: List.of();
		KvLease lease = this.leases.take(params, blockIds, checksums, ttl, consumer);
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
	 * Ends every lease taken for a consumer that is gone ({@link LeaseOutcome#RELEASED}),
	 * so that its blocks return to the pool at once instead of at the leases' time to
	 * live. A consumer rank of those leases still reading is answered
	 * {@link LeaseConfirmation#RELEASED}.
	 * @param consumer the consumer's agent
	 * @return how many leases ended
	 */
	public int releaseLeasesOf(String consumer) {
		return this.leases.releaseLeasesOf(consumer);
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
	 * Returns how many times one unit of work of the producer's thread (a lease's expiry,
	 * the answer to a consumer) threw an {@link Error} and the thread went on. Each was
	 * logged once, with its context.
	 * @return the count
	 */
	public long internalErrors() {
		return this.thread.internalErrors();
	}

	/**
	 * Returns how many answers to consumers wait now for the consumer's metadata to be
	 * found: answers to consumers this producer has not loaded yet, each waiting at most
	 * the peer timeout. The decisions themselves were made already, and answers to
	 * consumers whose metadata is loaded never wait here.
	 * @return the count, at most {@link #MAX_PENDING_ANSWERS}
	 */
	public int pendingAnswers() {
		return this.answers.pending().waiting();
	}

	/**
	 * Returns how long the answer that waits longest for its consumer's metadata has
	 * waited.
	 * @return the time, zero when no answer waits
	 */
	public Duration oldestPendingAnswer() {
		return this.answers.pending().oldest();
	}

	/**
	 * Returns whether answers back up: one has waited for its consumer's metadata longer
	 * than {@link #ANSWER_BACKLOG_AGE}. A consumer that published its metadata is found
	 * within milliseconds, so this means answers to agents whose metadata cannot be found
	 * (a peer that never published it, or a registry that cannot be reached); answers to
	 * consumers already loaded and the leases' decisions do not wait for them.
	 * @return whether answers back up now
	 */
	public boolean answersBackedUp() {
		return oldestPendingAnswer().compareTo(ANSWER_BACKLOG_AGE) > 0;
	}

	/**
	 * Returns how many answers were never sent because their consumer's metadata was not
	 * found within the peer timeout, or because too many answers waited already.
	 * @return the count since this producer was created
	 */
	public long droppedAnswers() {
		return this.answers.pending().dropped();
	}

	/**
	 * Returns how many done and release messages about a lease held or remembered came
	 * from another agent than the lease's consumer: they changed nothing and were not
	 * answered.
	 * @return the count since this producer was created
	 */
	public long ignoredMessages() {
		return this.leases.ignoredMessages();
	}

	/**
	 * Returns the number of leases held now.
	 * @return the count
	 */
	public int activeLeases() {
		return this.leases.activeLeases();
	}

	/**
	 * Returns how many leases ended in an outcome.
	 * @param outcome the outcome
	 * @return the count since this producer was created
	 */
	public long endedLeases(LeaseOutcome outcome) {
		return this.leases.endedLeases(outcome);
	}

	/**
	 * Returns how many blocks the leases held now lease, a block counted once per lease
	 * that holds it.
	 * @return the count
	 */
	public int leasedBlocks() {
		return this.leases.leasedBlocks();
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
		return this.leases.awaitEnded(timeout);
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

	private NixlException invalid(String operation, String peer, String detail) {
		return new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, this.agent.name(), peer, detail);
	}

	/**
	 * Withdraws the agent's entry when the producer published it
	 * ({@link Builder#exchange}), stops answering consumers, stops the producer's thread
	 * and releases the blocks of every lease still held (their outcome is
	 * {@link LeaseOutcome#CLOSED}; consumers still reading get no confirmation and fail).
	 * Closing twice is harmless; the cache stays open.
	 */
	@Override
	public void close() {
		MetadataPublication published = this.publication;
		if (published != null) {
			try {
				published.withdraw();
			}
			catch (NixlException ex) {
				logger.log(System.Logger.Level.WARNING,
						"KV producer of agent ''{0}'' could not withdraw its entry (it expires as the exchange"
								+ " lets entries expire): {1}",
						this.agent.name(), ex.getMessage());
			}
			finally {
				published.close();
			}
		}
		this.answers.close();
		if (this.consumerWatch != null) {
			this.consumerWatch.close();
		}
		if (this.leases.close()) {
			this.thread.awaitStopped();
		}
	}

	/**
	 * Builds a {@link KvProducer}.
	 */
	public static final class Builder {

		private final PagedKvCache cache;

		private @Nullable PeerLoader peers;

		private String prefix = DEFAULT_PREFIX;

		private Duration peerTimeout = DEFAULT_PEER_TIMEOUT;

		private KvIntegrity integrity = DEFAULT_INTEGRITY;

		private KvObserver observer = KvObserver.NONE;

		private @Nullable MetadataExchange consumers;

		private @Nullable MetadataExchange exchange;

		private Duration leaseTtl = DEFAULT_LEASE_TTL;

		private Builder(PagedKvCache cache) {
			this.cache = Objects.requireNonNull(cache, "cache");
		}

		/**
		 * Sets the exchange the producer's agent and its consumers publish their metadata
		 * in. The producer then publishes its agent's metadata there, with its cache's
		 * handle beside it as the document {@link KvDirectory#HANDLE_DOCUMENT} (where a
		 * consumer's {@link KvDirectory} finds it), when it is built; keeps both
		 * published for its life (a {@link MetadataPublication}: an entry that vanishes
		 * or changes is published again); and withdraws them when it closes. The exchange
		 * also loads the consumers' metadata ({@link PeerLoader#of}, unless
		 * {@link #peers} says otherwise) and is the one whose consumers are watched
		 * (unless {@link #watchConsumers} names another). The producer owns the agent's
		 * entry then: nothing else should publish or withdraw it.
		 * @param exchange the exchange
		 * @return this builder
		 */
		public Builder exchange(MetadataExchange exchange) {
			this.exchange = Objects.requireNonNull(exchange, "exchange");
			return this;
		}

		/**
		 * Sets how long a lease holds its blocks at most when its options name no time to
		 * live (default {@link KvProducer#DEFAULT_LEASE_TTL}).
		 * @param leaseTtl the time to live, positive
		 * @return this builder
		 */
		public Builder leaseTtl(Duration leaseTtl) {
			this.leaseTtl = SettingChecks.requirePositive(leaseTtl, "leaseTtl");
			return this;
		}

		/**
		 * Sets how the metadata of consumers the producer has not seen is loaded
		 * (required without an {@link #exchange}, which loads them by default).
		 * @param peers the loader
		 * @return this builder
		 */
		public Builder peers(PeerLoader peers) {
			this.peers = Objects.requireNonNull(peers, "peers");
			return this;
		}

		/**
		 * Sets the prefix of the protocol's notifications (default
		 * {@link KvProducer#DEFAULT_PREFIX}; the consumers must use the same).
		 * @param prefix the prefix
		 * @return this builder
		 */
		public Builder prefix(String prefix) {
			this.prefix = Objects.requireNonNull(prefix, "prefix");
			return this;
		}

		/**
		 * Sets how long an answer waits at most for its consumer's metadata to be found
		 * (it is asked for again and again meanwhile, never waited on), and how long
		 * loading a consumer's metadata for a push may take (default
		 * {@link KvProducer#DEFAULT_PEER_TIMEOUT}).
		 * @param peerTimeout the timeout, positive
		 * @return this builder
		 */
		public Builder peerTimeout(Duration peerTimeout) {
			this.peerTimeout = Objects.requireNonNull(peerTimeout, "peerTimeout");
			return this;
		}

		/**
		 * Sets what the producer's leases let consumers check (default
		 * {@link KvProducer#DEFAULT_INTEGRITY}).
		 * @param integrity the integrity
		 * @return this builder
		 */
		public Builder integrity(KvIntegrity integrity) {
			this.integrity = Objects.requireNonNull(integrity, "integrity");
			return this;
		}

		/**
		 * Sets what observes the producer's leases and answers (default
		 * {@link KvObserver#NONE}): each lease taken, whose parameters then carry the
		 * trace context the observer gives, and each answer to a consumer's done message,
		 * with the trace context of the consumer's pull.
		 * @param observer the observer
		 * @return this builder
		 */
		public Builder observer(KvObserver observer) {
			this.observer = Objects.requireNonNull(observer, "observer");
			return this;
		}

		/**
		 * Watches, in an exchange, every consumer that a lease names
		 * ({@link KvLease.Options#consumer(String)}): when its entry is withdrawn or
		 * expires (its process stopped, or died and its entry's time to live ran out),
		 * its leases are released ({@link KvProducer#releaseLeasesOf}). Up to
		 * {@link ConsumerWatch#MAX_WATCHED} consumers are watched at once; the watches
		 * end when the producer closes. Without it, the consumers are watched in the
		 * {@link #exchange}, if one is set, and not at all otherwise.
		 * @param exchange the exchange the consumers publish their metadata in
		 * @return this builder
		 */
		public Builder watchConsumers(MetadataExchange exchange) {
			this.consumers = Objects.requireNonNull(exchange, "exchange");
			return this;
		}

		/**
		 * Builds the producer, which takes the consumers' notifications from now on, and
		 * publishes its agent's entry when an {@link #exchange} is set.
		 * @return the producer
		 * @throws IllegalStateException when neither a {@link #peers} loader nor an
		 * {@link #exchange} was set
		 * @throws NixlException when the exchange refused the entry or cannot be reached
		 * (nothing is left running then)
		 */
		public KvProducer build() {
			MetadataExchange exchange = this.exchange;
			PeerLoader peers = this.peers;
			if (peers == null && exchange != null) {
				peers = PeerLoader.of(exchange);
			}
			if (peers == null) {
				throw new IllegalStateException("a KvProducer needs an exchange or a PeerLoader");
			}
			MetadataExchange consumers = (this.consumers != null) ? this.consumers : exchange;
			MetadataPublication publication = null;
			if (exchange != null) {
				publication = MetadataPublication.builder(exchange, this.cache.agent())
					.document(KvDirectory.HANDLE_DOCUMENT, this.cache.handle().toJson())
					.build();
			}
			KvProducer producer = new KvProducer(this, peers, consumers, publication);
			if (publication != null) {
				try {
					publication.publish();
				}
				catch (RuntimeException ex) {
					producer.close();
					throw ex;
				}
			}
			return producer;
		}

	}

}
