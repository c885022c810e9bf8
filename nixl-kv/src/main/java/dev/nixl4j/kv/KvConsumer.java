package dev.nixl4j.kv;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.SettingChecks;
import dev.nixl4j.TransferRefusedException;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import org.jspecify.annotations.Nullable;

/**
 * The decode side of a KV block transfer: it pulls a request's blocks from a producer
 * into its own cache (READ) and waits for blocks a producer pushes (WRITE). Built with
 * {@link #builder}.
 *
 * <p>
 * A {@link #pull(KvTransferParams, Duration) pull} takes local blocks from the cache's
 * allocator, reads the lease's blocks into them and returns them as {@link KvBlocks} once
 * the producer confirmed that its lease held the blocks when the consumer's done message
 * arrived (and, with {@link KvIntegrity#CRC32C}, the blocks that landed match the lease's
 * checksums); otherwise it throws, and the library gives the blocks back: at once, or,
 * when a READ was given up while it may still land, once it can no longer land
 * ({@link Builder#quarantine}). With a metadata exchange ({@link Builder#exchange}), the
 * consumer owns its session with each producer ({@link #sessions()}): it resolves the
 * producer's {@link RemoteCacheHandle} by name, checks compatibility before anything is
 * read, and reconnects after a disconnect; without one, the application gives each
 * producer's handle ({@link #connect}). The protocol, the session's states, resends of
 * the done message, heterogeneous tensor parallelism and integrity checks:
 * docs/architecture.md, section "KV cache".
 *
 * <p>
 * Thread-safe: concurrent pulls of different requests share the sessions and prepared
 * lists.
 */
public final class KvConsumer implements AutoCloseable {

	private static final System.Logger logger = System.getLogger(KvConsumer.class.getName());

	/**
	 * The most producers a consumer keeps sessions with; past it, sessions of producers
	 * that are gone make room.
	 */
	public static final int MAX_SESSIONS = 4096;

	/**
	 * How many times a pull tries to post its READ: once more after a post that failed in
	 * the backend reset the session.
	 */
	private static final int MAX_POSTS = 2;

	/**
	 * How long a pull waits for the producer's answer after its READ completed before it
	 * sends its done message again, unless told otherwise: a hundred times the round trip
	 * of a confirmation on an idle host (about 0.5 ms), so that a loaded host rarely
	 * repeats a message that was only slow, while a lost one costs tens of milliseconds
	 * rather than the pull's deadline.
	 */
	public static final Duration DEFAULT_CONFIRMATION_RESEND = Duration.ofMillis(50);

	/**
	 * How many times a pull sends its done message again at most; the wait before each
	 * doubles.
	 */
	public static final int MAX_CONFIRMATION_RESENDS = 5;

	private final PagedKvCache cache;

	private final NixlAgent agent;

	private final int rank;

	private final PeerLoader peers;

	private final @Nullable KvDirectory directory;

	private final String prefix;

	private final Duration peerTimeout;

	private final Duration confirmationResend;

	private final KvObserver observer;

	private final @Nullable Duration quarantine;

	private final @Nullable MetadataPublication ownPublication;

	private final AtomicInteger quarantined = new AtomicInteger();

	private final Map<String, ProducerSession> sessions = new ConcurrentHashMap<>();

	private final PullListeners listeners = new PullListeners();

	private final ConfirmedRead reader;

	private KvConsumer(PagedKvCache cache, int rank, PeerLoader peers, @Nullable KvDirectory directory, String prefix,
			Duration peerTimeout, Duration confirmationResend, KvObserver observer, @Nullable Duration quarantine,
			@Nullable MetadataPublication ownPublication) {
		this.cache = Objects.requireNonNull(cache, "cache");
		this.agent = cache.agent();
		if (rank < 0) {
			throw new IllegalArgumentException("rank must not be negative, was " + rank);
		}
		this.rank = rank;
		this.peers = Objects.requireNonNull(peers, "peers");
		this.directory = directory;
		KvMessages.requirePrefix(prefix);
		this.prefix = prefix;
		this.peerTimeout = SettingChecks.requirePositive(peerTimeout, "peerTimeout");
		this.confirmationResend = SettingChecks.requireNotNegative(confirmationResend, "confirmationResend");
		this.observer = Objects.requireNonNull(observer, "observer");
		this.quarantine = quarantine;
		this.ownPublication = ownPublication;
		this.reader = new ConfirmedRead(cache, prefix, confirmationResend, this.listeners);
	}

	/**
	 * Starts a consumer of a cache.
	 * @param cache the cache blocks are pulled into
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
	 * Returns what a producer needs to push into this consumer's cache.
	 * @return the handle
	 */
	public RemoteCacheHandle handle() {
		return this.cache.handle();
	}

	/**
	 * Returns where the session with each producer pulled from stands.
	 * @return one snapshot per producer, in no particular order
	 */
	public List<KvProducerSession> sessions() {
		return this.sessions.values().stream().map(ProducerSession::snapshot).toList();
	}

	/**
	 * Learns a producer's cache from the application (a new handle of the same agent,
	 * after it restarted, replaces the old one) and loads its metadata. A consumer built
	 * with a metadata exchange ({@link Builder#exchange}) does not need it.
	 * @param producer the producer's handle
	 */
	public void connect(RemoteCacheHandle producer) {
		session(producer.agentName()).connect(producer, System.nanoTime() + this.peerTimeout.toNanos());
	}

	/**
	 * Pulls a request's blocks into blocks taken from this consumer's cache and waits for
	 * the producer's confirmation that its lease held them: block
	 * {@code params.blockIds().get(i)} (or this rank's slice of its heads) of every
	 * region lands in block {@link KvBlocks#blockId(int) blockId(i)} of the same region.
	 * Close the result to give the blocks back.
	 *
	 * <p>
	 * When the pull fails, the library gives the blocks back (and the lease, unless the
	 * producer ended it already): at once, or, when a READ was given up while in flight
	 * (it timed out or was interrupted) and may still land, once it can no longer land
	 * ({@link Builder#quarantine}), so that no other request gets blocks a late READ may
	 * write over.
	 * @param params the producer's transfer parameters
	 * @param timeout how long resolving the producer, the READ and the confirmation may
	 * take together
	 * @return the blocks, holding the producer's data
	 * @throws KvLeaseLostException when the producer did not confirm
	 * @throws KvIntegrityException when the producer confirmed but the data that landed
	 * does not match its checksums
	 * @throws KvProducerUnavailableException when the producer is gone, or restarted
	 * since it took the lease
	 * @throws KvIncompatibleException when the producer's cache cannot exchange blocks
	 * with this one
	 * @throws dev.nixl4j.TransferRefusedException when admission control (a bulkhead, a
	 * peer's circuit breaker) refused the READ: nothing moved, the lease was given back,
	 * and a new lease may be pulled later
	 * @throws NixlException {@link NixlStatus#BUSY} when the cache has fewer free blocks
	 * than the lease (the lease is given back), {@link NixlStatus#ERROR_NOT_FOUND} for a
	 * producer not connected (without an exchange),
	 * {@link NixlStatus#ERROR_INVALID_PARAM} for mismatched layouts or bad blocks, or the
	 * failure of the READ (operation {@code kv_pull}, naming the producer, with the
	 * READ's status and failure as its cause)
	 */
	public KvBlocks pull(KvTransferParams params, Duration timeout) {
		int count = params.blockIds().size();
		int[] local;
		try {
			local = this.cache.allocator().allocate(count);
		}
		catch (NixlException ex) {
			release(params);
			throw new NixlException(ex.status(), "kv_pull", this.agent.name(), params.producerAgent(),
					"this cache cannot take the " + count + " blocks of request '" + params.requestId() + "' now ("
							+ ex.detail() + "): its lease was given back",
					ex, ex.status() == NixlStatus.BUSY);
		}
		boolean pulled = false;
		try {
			KvBlocks blocks = new KvBlocks(this.cache, local, pull(params, local, timeout));
			pulled = true;
			return blocks;
		}
		finally {
			if (!pulled) {
				// a READ that may still land holds its own reference (quarantine)
				this.cache.allocator().release(local);
			}
		}
	}

	/**
	 * Pulls a request's blocks into local blocks the caller allocated (a model that
	 * manages its own blocks), and waits for the producer's confirmation that its lease
	 * held them: block {@code params.blockIds()[i]} (or this rank's slice of its heads)
	 * of every region lands in block {@code localBlockIds[i]} of the same region. The
	 * blocks stay the caller's; when the pull fails, the caller may give them back at
	 * once: when a READ was given up while it may still land, the library holds a
	 * reference of its own on each block ({@link BlockAllocator#retain}) until it can no
	 * longer land ({@link Builder#quarantine}).
	 * @param params the producer's transfer parameters
	 * @param localBlockIds allocated local blocks, distinct, one per producer block
	 * @param timeout how long resolving the producer, the READ and the confirmation may
	 * take together
	 * @return the bytes read
	 * @throws KvLeaseLostException when the producer did not confirm (the data must not
	 * be used)
	 * @throws KvIntegrityException when the producer confirmed but the data that landed
	 * does not match its checksums (the data must not be used)
	 * @throws KvProducerUnavailableException when the producer is gone, or restarted
	 * since it took the lease
	 * @throws KvIncompatibleException when the producer's cache cannot exchange blocks
	 * with this one
	 * @throws dev.nixl4j.TransferRefusedException when admission control refused the READ
	 * (the lease was given back)
	 * @throws NixlException as {@link #pull(KvTransferParams, Duration)} says
	 */
	public long pull(KvTransferParams params, int[] localBlockIds, Duration timeout) {
		long start = System.nanoTime();
		Duration hold = (this.quarantine != null) ? this.quarantine : timeout.multipliedBy(2);
		KvObserver.Pull observed = this.observer.pullStarted(params);
		KvPullListener[] told = this.listeners.current();
		long bytes;
		try {
			bytes = pull(params, localBlockIds, start + timeout.toNanos(), hold, observed);
		}
		catch (RuntimeException ex) {
			observed.end((ex instanceof KvLeaseLostException lost) ? lost.confirmation() : null, ex);
			pullFailed(told, params, ex, start);
			throw ex;
		}
		catch (Error ex) {
			observed.end(null, ex);
			throw ex;
		}
		observed.end(LeaseConfirmation.HELD, null);
		if (told.length > 0) {
			long nanos = System.nanoTime() - start;
			for (KvPullListener listener : told) {
				listener.pulled(params.producerAgent(), bytes, nanos);
			}
		}
		return bytes;
	}

	private static void pullFailed(KvPullListener[] told, KvTransferParams params, RuntimeException failure,
			long start) {
		if (told.length == 0) {
			return;
		}
		long nanos = System.nanoTime() - start;
		for (KvPullListener listener : told) {
			listener.pullFailed(params.producerAgent(), failure, nanos);
		}
	}

	/**
	 * Adds a listener told of every pull from now on, and of every reconnect
	 * ({@link KvPullListener}).
	 * @param listener the listener
	 */
	public void addPullListener(KvPullListener listener) {
		this.listeners.add(listener);
	}

	/**
	 * Returns how many local blocks are held back now because a READ given up while in
	 * flight may still land in them ({@link Builder#quarantine}).
	 * @return the count, a block held for two such READs counted twice
	 */
	public int quarantinedBlocks() {
		return this.quarantined.get();
	}

	private long pull(KvTransferParams params, int[] localBlockIds, long deadline, Duration hold,
			KvObserver.Pull observed) {
		String producer = params.producerAgent();
		int[] remoteIds = params.blockIdArray();
		KvCacheLayout own = this.cache.layout();
		if (localBlockIds.length != remoteIds.length) {
			throw invalid(producer, localBlockIds.length + " local blocks given for the " + remoteIds.length
					+ " blocks of request '" + params.requestId() + "'");
		}
		PagedKvCache.requireBlocks("kv_pull", localBlockIds, own.numBlocks(), "this cache");
		PagedKvCache.requireDistinct("kv_pull", localBlockIds, "the local blocks");
		for (int id : localBlockIds) {
			if (this.cache.allocator().references(id) == 0) {
				throw invalid(producer, "local block " + id + " is not allocated");
			}
		}
		ProducerSession session = session(producer);
		session.requireResolvable();
		for (int post = 1;; post++) {
			Stage stage = Stage.RESOLVE;
			RemoteCacheHandle remote = null;
			try {
				remote = session.ready(params, deadline);
				stage = Stage.CHECK;
				int slice = checkRemote(params, remote, remoteIds);
				stage = Stage.READ;
				this.reader.read(params, remote, localBlockIds, remoteIds, slice, deadline, observed);
				return localBlockIds.length * (long) own.regionCount() * own.blockLength();
			}
			catch (RuntimeException ex) {
				boolean mayRetry = post < MAX_POSTS;
				RuntimeException failure = settle(stage, ex, params, session, remote, localBlockIds, hold, mayRetry,
						deadline);
				if (failure != null) {
					throw failure;
				}
			}
			catch (Error ex) {
				release(params);
				throw ex;
			}
		}
	}

	/**
	 * Decides, in one place, what a failed attempt of a pull means: whether the session
	 * with the producer is reset, whether the pull tries again, whether the lease goes
	 * back to the producer, whether the local blocks are quarantined, and what the caller
	 * is told.
	 * @param stage how far the attempt came
	 * @param ex what failed
	 * @param remote the producer's handle, when the attempt got one
	 * @param mayRetry whether this pull may post its READ once more
	 * @return the failure to throw, or {@code null} to try again
	 */
	private @Nullable RuntimeException settle(Stage stage, RuntimeException ex, KvTransferParams params,
			ProducerSession session, @Nullable RemoteCacheHandle remote, int[] local, Duration hold, boolean mayRetry,
			long deadline) {
		return switch (stage) {
			// the producer is gone, or restarted: its lease went with it; any other
			// producer gets its lease back (an incompatible one too: a consumer that
			// cannot read the blocks must not hold them till expiry)
			case RESOLVE -> (ex instanceof KvProducerUnavailableException) ? ex : released(params, ex);
			// arguments that do not describe a pull leave the lease alone
			case CHECK -> ex;
			case READ -> switch (ex) {
				// the producer answered: the lease is no longer held
				case KvLeaseLostException lost when lost.confirmation() != null -> lost;
				case ConfirmedRead.Failed failed -> readFailed(failed, params, session, Objects.requireNonNull(remote),
						local, hold, mayRetry, deadline);
				default -> released(params, ex);
			};
		};
	}

	/**
	 * What a READ that failed or was given up means ({@link #settle}).
	 */
	private @Nullable RuntimeException readFailed(ConfirmedRead.Failed failed, KvTransferParams params,
			ProducerSession session, RemoteCacheHandle remote, int[] local, Duration hold, boolean mayRetry,
			long deadline) {
		if (failed.failure instanceof TransferRefusedException refused) {
			// nothing moved and the connection is fine: the refusal says why
			return released(params, refused);
		}
		if (!(failed.failure instanceof NixlException failure)) {
			quarantineIf(failed.mayLand, local, hold);
			return released(params, failed.failure);
		}
		boolean reset = failure.status() == NixlStatus.ERROR_BACKEND
				&& session.reset(remote, failure.detail(), deadline);
		if (!failed.posted && reset && mayRetry && deadline - System.nanoTime() > 0) {
			// nothing was posted: no byte moved, the lease stands
			return null;
		}
		quarantineIf(failed.mayLand, local, hold);
		return released(params, session.explain(params, failure));
	}

	private RuntimeException released(KvTransferParams params, RuntimeException failure) {
		release(params);
		return failure;
	}

	/**
	 * Holds a reference on each local block of a READ given up while it may still land,
	 * and drops it once the READ can no longer land, so that the blocks cannot go to
	 * another request before.
	 */
	private void quarantineIf(boolean mayLand, int[] local, Duration hold) {
		if (!mayLand) {
			return;
		}
		BlockAllocator allocator = this.cache.allocator();
		try {
			allocator.retain(local);
		}
		catch (NixlException ex) {
			// the caller gave its blocks back already: nothing is left to hold
			logger.log(System.Logger.Level.WARNING,
					"Cannot hold back the local blocks of a READ that may still land: {0}", ex.getMessage());
			return;
		}
		this.quarantined.addAndGet(local.length);
		int[] held = local.clone();
		Thread.ofVirtual().name("kv-quarantine-" + this.agent.name()).start(() -> {
			try {
				Thread.sleep(hold);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				this.quarantined.addAndGet(-held.length);
				allocator.release(held);
			}
		});
	}

	/** How far an attempt of a pull came. */
	private enum Stage {

		/** Resolving the producer and loading its metadata. */
		RESOLVE,

		/** Checking the lease against the producer's handle and this cache. */
		CHECK,

		/** Reading the blocks and waiting for the confirmation. */
		READ

	}

	/**
	 * Checks the lease against the producer's handle and this cache.
	 * @return this rank's slice of the producer's heads
	 */
	private int checkRemote(KvTransferParams params, RemoteCacheHandle remote, int[] remoteIds) {
		String producer = params.producerAgent();
		if (!params.layoutFingerprint().equals(remote.layout().fingerprint())) {
			throw invalid(producer,
					"the transfer of request '" + params.requestId() + "' names layout " + params.layoutFingerprint()
							+ " but the producer's handle describes " + remote.layout().fingerprint());
		}
		int ranks = params.consumerRanks();
		KvCacheLayout expected;
		try {
			expected = remote.layout().headSlice(ranks);
		}
		catch (IllegalArgumentException ex) {
			throw invalid(producer, Objects.requireNonNullElse(ex.getMessage(), ex.toString()));
		}
		KvCacheLayout own = this.cache.layout();
		if (!expected.fingerprint().equals(own.fingerprint())) {
			throw invalid(producer, "layout mismatch: this cache is " + own.fingerprint() + " but the producer's blocks"
					+ ((ranks > 1) ? " split over " + ranks + " ranks" : "") + " are " + expected.fingerprint());
		}
		PagedKvCache.requireBlocks("kv_pull", remoteIds, remote.layout().numBlocks(), "producer '" + producer + "'");
		return this.rank % ranks;
	}

	private ProducerSession session(String producer) {
		ProducerSession session = this.sessions.get(producer);
		if (session != null) {
			return session;
		}
		if (this.sessions.size() >= MAX_SESSIONS) {
			this.sessions.values().removeIf(s -> s.state() == KvSessionState.GONE);
			if (this.sessions.size() >= MAX_SESSIONS) {
				throw new NixlException(NixlStatus.ERROR_INVALID_STATE, "kv_pull", this.agent.name(), producer,
						"this consumer keeps sessions with " + MAX_SESSIONS + " producers already");
			}
		}
		return this.sessions.computeIfAbsent(producer, name -> new ProducerSession(name, this.cache, this.peers,
				this.directory, this.peerTimeout, this.listeners::reconnected));
	}

	/**
	 * Returns how many pulls failed with {@link KvIntegrityException}: data that landed
	 * under a confirmed lease did not match the producer's checksums.
	 * @return the count since this consumer was created
	 */
	public long integrityFailures() {
		return this.reader.integrityFailures();
	}

	/**
	 * Returns how long a pull waits for the producer's answer after its READ completed
	 * before it sends its done message again ({@link Builder#confirmationResend}).
	 * @return the bound, {@link Duration#ZERO} when resends are off
	 */
	public Duration confirmationResend() {
		return this.confirmationResend;
	}

	/**
	 * Returns how many times a pull sent its done message again because no answer came
	 * within the resend bound ({@link Builder#confirmationResend}).
	 * @return the count since this consumer was created
	 */
	public long confirmationResends() {
		return this.reader.confirmationResends();
	}

	/**
	 * Gives a lease back to its producer without (or after failing to) pull it: the
	 * producer releases the lease's blocks at once, and a rank of this lease still
	 * reading them is answered {@link LeaseConfirmation#RELEASED}. {@link #pull} calls it
	 * when it fails; call it when a lease will not be pulled at all. Best effort, and
	 * never waits for the producer: a producer whose metadata is not loaded and not
	 * published now, or that is gone, keeps the lease until it expires; a lease that
	 * already ended is left alone.
	 * @param params the lease's transfer parameters
	 * @return whether the release was sent
	 */
	public boolean release(KvTransferParams params) {
		String producer = params.producerAgent();
		int slice = this.rank % params.consumerRanks();
		try {
			if (!this.agent.hasRemoteMetadata(producer)) {
				this.peers.load(this.agent, producer, Duration.ZERO);
			}
			this.agent.sendNotification(producer,
					KvMessages.release(this.prefix, params.requestId(), params.leaseId(), slice));
			return true;
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.INFO,
					"Could not give the lease of request ''{0}'' back to ''{1}'' (it expires" + " on its own): {2}",
					params.requestId(), producer, ex.getMessage());
			return false;
		}
	}

	/**
	 * Describes local blocks for a producer that will push into them.
	 * @param requestId the request
	 * @param localBlockIds allocated local blocks, distinct, in token order
	 * @return the parameters to send to the producer, with {@link #handle()}
	 */
	public KvPushParams pushParams(String requestId, int[] localBlockIds) {
		PagedKvCache.requireBlocks("kv_push", localBlockIds, this.cache.layout().numBlocks(), "this cache");
		PagedKvCache.requireDistinct("kv_push", localBlockIds, "the local blocks");
		List<Integer> ids = new ArrayList<>(localBlockIds.length);
		for (int id : localBlockIds) {
			if (this.cache.allocator().references(id) == 0) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, "kv_push", this.agent.name(), null,
						"local block " + id + " is not allocated");
			}
			ids.add(id);
		}
		return new KvPushParams(this.agent.name(), requestId, ids, this.cache.layout().fingerprint());
	}

	/**
	 * Waits until a producer's push of a request has landed (its WRITE's notification
	 * arrived). If it times out, the producer may still write later: keep the blocks
	 * allocated until the producer is known to have given up or gone.
	 * @param producerAgent the producer
	 * @param requestId the request
	 * @param timeout how long to wait
	 * @throws NixlException {@link NixlStatus#TIMEOUT} when the push did not land in time
	 */
	public void awaitPush(String producerAgent, String requestId, Duration timeout) {
		KvMessages.requireRequestId(requestId);
		try {
			this.agent
				.expectNotification(NotificationMatcher.exact(producerAgent,
						KvMessages.push(this.prefix, requestId).getBytes(StandardCharsets.UTF_8)), timeout)
				.join();
		}
		catch (CompletionException ex) {
			if (ex.getCause() instanceof NixlException failure) {
				throw failure;
			}
			throw ex;
		}
	}

	/**
	 * Stops the publication of this agent's metadata that the consumer made for its
	 * exchange ({@link Builder#exchange}) without withdrawing it; a publication the
	 * application gave ({@link Builder#publication}) stays the application's. Blocks held
	 * back for a READ that may still land go back to the pool on their own. Closing twice
	 * is harmless.
	 */
	@Override
	public void close() {
		if (this.ownPublication != null) {
			this.ownPublication.close();
		}
	}

	private NixlException invalid(String producer, String detail) {
		return new NixlException(NixlStatus.ERROR_INVALID_PARAM, "kv_pull", this.agent.name(), producer, detail);
	}

	/**
	 * Builds a {@link KvConsumer}.
	 */
	public static final class Builder {

		private final PagedKvCache cache;

		private int rank;

		private @Nullable MetadataExchange exchange;

		private @Nullable MetadataPublication publication;

		private @Nullable PeerLoader peers;

		private String prefix = KvMessages.DEFAULT_PREFIX;

		private Duration peerTimeout = KvProducer.DEFAULT_PEER_TIMEOUT;

		private Duration confirmationResend = DEFAULT_CONFIRMATION_RESEND;

		private KvObserver observer = KvObserver.NONE;

		private @Nullable Duration quarantine;

		private @Nullable KvDirectory directory;

		private Builder(PagedKvCache cache) {
			this.cache = Objects.requireNonNull(cache, "cache");
		}

		/**
		 * Sets this consumer's tensor-parallel rank (default 0).
		 * @param rank the rank
		 * @return this builder
		 */
		public Builder rank(int rank) {
			this.rank = rank;
			return this;
		}

		/**
		 * Sets the metadata exchange where producers publish their metadata and their
		 * {@link RemoteCacheHandle} ({@link KvDirectory#HANDLE_DOCUMENT}): the consumer
		 * loads producers' metadata from it ({@link PeerLoader#of}), finds producers by
		 * the name in a lease and follows their restarts, and publishes this agent's
		 * metadata there so that producers can answer it (with the {@link #publication}
		 * given, else with one it makes, published on the first pull and stopped by
		 * {@link KvConsumer#close()}). Without an exchange, set {@link #peers} and give
		 * each producer's handle ({@link KvConsumer#connect}).
		 * @param exchange the exchange
		 * @return this builder
		 */
		public Builder exchange(MetadataExchange exchange) {
			this.exchange = Objects.requireNonNull(exchange, "exchange");
			return this;
		}

		/**
		 * Sets the publication of this consumer's agent in the {@link #exchange} that the
		 * application keeps already (a {@code NixlLifecycle}'s, say), so that the
		 * consumer does not make a second one; it stays the application's.
		 * @param publication the publication of the cache's agent in the exchange
		 * @return this builder
		 */
		public Builder publication(MetadataPublication publication) {
			this.publication = Objects.requireNonNull(publication, "publication");
			return this;
		}

		/**
		 * Sets how producers' metadata is loaded (default with an {@link #exchange}:
		 * {@link PeerLoader#of} it; required without one: {@link PeerLoader#nixlEtcd()}
		 * or {@link PeerLoader#preloaded()}, say).
		 * @param peers the loader
		 * @return this builder
		 */
		public Builder peers(PeerLoader peers) {
			this.peers = Objects.requireNonNull(peers, "peers");
			return this;
		}

		/**
		 * Sets the prefix of the protocol's notifications (default
		 * {@link KvProducer#DEFAULT_PREFIX}; the producers must use the same).
		 * @param prefix the prefix
		 * @return this builder
		 */
		public Builder prefix(String prefix) {
			this.prefix = Objects.requireNonNull(prefix, "prefix");
			return this;
		}

		/**
		 * Sets how long resolving a producer and loading its metadata may take at most
		 * (default {@link KvProducer#DEFAULT_PEER_TIMEOUT}); a pull's own deadline cuts
		 * it shorter.
		 * @param peerTimeout the timeout
		 * @return this builder
		 */
		public Builder peerTimeout(Duration peerTimeout) {
			this.peerTimeout = Objects.requireNonNull(peerTimeout, "peerTimeout");
			return this;
		}

		/**
		 * Sets how long a pull waits for the producer's answer after its READ completed
		 * before it sends its done message again (default
		 * {@link KvConsumer#DEFAULT_CONFIRMATION_RESEND}); the wait doubles after each
		 * resend, up to {@link KvConsumer#MAX_CONFIRMATION_RESENDS} resends within the
		 * pull's deadline. A lost notification then delays a pull by about this bound
		 * instead of failing it at its deadline. {@link Duration#ZERO} turns resends off.
		 * @param confirmationResend the bound, not negative
		 * @return this builder
		 */
		public Builder confirmationResend(Duration confirmationResend) {
			this.confirmationResend = Objects.requireNonNull(confirmationResend, "confirmationResend");
			return this;
		}

		/**
		 * Sets how long the local blocks of a pull whose READ was given up while in
		 * flight (it timed out or was interrupted) are held back before they go back to
		 * the pool (default: twice that pull's timeout). Such a READ may still land when
		 * a stalled link comes back; until it can no longer land, a request given the
		 * same blocks could find its bytes written over.
		 * @param quarantine how long, positive
		 * @return this builder
		 */
		public Builder quarantine(Duration quarantine) {
			this.quarantine = SettingChecks.requirePositive(quarantine, "quarantine");
			return this;
		}

		/**
		 * Sets what observes this consumer's pulls (default {@link KvObserver#NONE}): the
		 * pull, its READ and its wait for the producer's answer, with the lease's trace
		 * context; the pull's own context then goes to the producer in the done message.
		 * @param observer the observer
		 * @return this builder
		 */
		public Builder observer(KvObserver observer) {
			this.observer = Objects.requireNonNull(observer, "observer");
			return this;
		}

		/**
		 * Sets the directory that finds producers, for a consumer built with
		 * {@link #peers} and no exchange (the tests' way to watch its lookups).
		 * @param directory the directory
		 * @return this builder
		 */
		Builder directory(KvDirectory directory) {
			this.directory = Objects.requireNonNull(directory, "directory");
			return this;
		}

		/**
		 * Builds the consumer.
		 * @return the consumer
		 * @throws IllegalStateException when neither an {@link #exchange} nor a
		 * {@link #peers} loader was set, or a {@link #publication} without an exchange
		 * @throws IllegalArgumentException when the publication is not of the cache's
		 * agent
		 */
		public KvConsumer build() {
			MetadataExchange exchange = this.exchange;
			MetadataPublication given = this.publication;
			if (exchange == null) {
				if (given != null) {
					throw new IllegalStateException("a KvConsumer's publication needs the exchange it publishes in");
				}
				if (this.peers == null) {
					throw new IllegalStateException(
							"a KvConsumer needs a MetadataExchange (exchange) or, without one, a PeerLoader (peers)");
				}
				return new KvConsumer(this.cache, this.rank, this.peers, this.directory, this.prefix, this.peerTimeout,
						this.confirmationResend, this.observer, this.quarantine, null);
			}
			String agent = this.cache.agent().name();
			if (given != null && !given.agentName().equals(agent)) {
				throw new IllegalArgumentException("the publication of agent '" + given.agentName()
						+ "' is not that of the cache's agent '" + agent + "'");
			}
			PeerLoader loader = (this.peers != null) ? this.peers : PeerLoader.of(exchange);
			MetadataPublication made = (given == null)
					? MetadataPublication.builder(exchange, this.cache.agent()).build() : null;
			KvDirectory directory = KvDirectory.of(exchange, (given != null) ? given : Objects.requireNonNull(made));
			return new KvConsumer(this.cache, this.rank, loader, directory, this.prefix, this.peerTimeout,
					this.confirmationResend, this.observer, this.quarantine, made);
		}

	}

}
