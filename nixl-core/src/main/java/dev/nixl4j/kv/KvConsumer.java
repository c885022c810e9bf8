package dev.nixl4j.kv;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.SettingChecks;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;

/**
 * The decode side of a KV block transfer: it pulls a request's blocks from a producer
 * into its own cache (READ) and waits for blocks a producer pushes (WRITE).
 *
 * <p>
 * <b>The session with each producer belongs to the consumer.</b> Built with a
 * {@link KvDirectory} ({@link #builder}), a consumer needs nothing but the lease's
 * {@link KvTransferParams}: on the first pull from a producer it resolves the producer's
 * {@link RemoteCacheHandle} by name, checks that the producer's cache can exchange blocks
 * with its own (layout and model fingerprint, before anything is read), publishes its own
 * metadata (the producer confirms leases with notifications), loads the producer's and
 * prepares the lists. A lease taken by another incarnation of the producer's cache
 * resolves it again; lists of two incarnations are never mixed, and a lease whose
 * producer restarted since fails at once with {@link KvProducerUnavailableException}. A
 * transfer that fails in the backend (the connection dropped) resets the session: this
 * side forgets the producer's metadata and lists and publishes its own again, so that the
 * producer forgets this consumer's too, and the next pull connects anew; a pull whose
 * READ was not posted yet is tried again at once within its deadline, since no byte can
 * have moved. While the producer publishes nothing, pulls fail at once with
 * {@link KvProducerUnavailableException} instead of waiting out their deadline.
 * {@link #sessions()} shows where each session stands. Without a directory, a consumer
 * learns each producer's handle from the application ({@link #connect}).
 *
 * <p>
 * A {@link #pull} returns only once the producer confirmed that it held the blocks when
 * the consumer's notification arrived (see {@link KvProducer}); otherwise it throws
 * {@link KvLeaseLostException} and the data in the local blocks must not be used. A pull
 * that fails for any reason gives the lease back to the producer at once
 * ({@link #release}), so its blocks do not stay out of its pool until the lease expires;
 * a consumer that will not pull a lease it was given (it cannot allocate local blocks,
 * say) calls {@link #release} itself. When no answer came within a short bound after the
 * READ completed ({@link Builder#confirmationResend}), the done message is sent again, so
 * that a lost notification delays the pull by about that bound instead of failing it at
 * its deadline ({@link #confirmationResends()}).
 *
 * <p>
 * With heterogeneous tensor parallelism (the consumer side has {@code k} times the
 * producer's ranks, {@link KvTransferParams#consumerRanks()} {@code = k}), consumer rank
 * {@code r} holds {@code numKvHeads / k} heads and reads slice {@code r % k} of the heads
 * of each producer block; that needs HND order, in which a slice of heads is contiguous.
 *
 * <p>
 * <b>Integrity.</b> The consumer's notification carries the lease's generation digest
 * ({@link KvTransferParams#generation()}), so a producer that handed a block out again
 * answers {@link LeaseConfirmation#STALE} rather than {@code HELD}. When the parameters
 * carry checksums ({@link KvIntegrity#CRC32C}), a pull that the producer confirmed
 * computes the CRC32C of every local block that was written and compares it with the
 * producer's before it returns; a mismatch throws {@link KvIntegrityException} (counted
 * by {@link #integrityFailures()}), and the data must not be used: the caller frees or
 * reuses its local blocks as after any failed pull.
 *
 * <p>
 * Thread-safe: concurrent pulls of different requests share the sessions and prepared
 * lists.
 */
public final class KvConsumer {

	private static final System.Logger logger = System.getLogger(KvConsumer.class.getName());

	/**
	 * How long a late confirmation is waited for and dropped, so it does not sit in the
	 * mailbox.
	 */
	private static final Duration LATE_ANSWER = Duration.ofMinutes(10);

	/**
	 * How long answers to repeated done messages are waited for and dropped once the
	 * producer answered one: it answers each message it gets within about a round trip,
	 * so a repeat whose answer did not come by then was lost, and the wait ends rather
	 * than stay among the agent's waiters for {@link #LATE_ANSWER}.
	 */
	private static final Duration DUPLICATE_ANSWER = Duration.ofSeconds(30);

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

	/** NIXL's name of the operation that posts a transfer. */
	private static final String POST_OPERATION = "post_xfer_req";

	private final PagedKvCache cache;

	private final NixlAgent agent;

	private final int rank;

	private final PeerLoader peers;

	private final @Nullable KvDirectory directory;

	private final String prefix;

	private final Duration peerTimeout;

	private final Duration confirmationResend;

	private final KvObserver observer;

	private final Map<String, ProducerSession> sessions = new ConcurrentHashMap<>();

	private final AtomicLong integrityFailures = new AtomicLong();

	private final AtomicLong confirmationResends = new AtomicLong();

	private static final KvPullListener[] NO_LISTENERS = {};

	/** Replaced as a whole when a listener is added, so a pull reads it once. */
	private volatile KvPullListener[] listeners = NO_LISTENERS;

	/**
	 * Creates a consumer with the default notification prefix and peer timeout.
	 * @param cache the cache blocks are pulled into
	 * @param rank this consumer's tensor-parallel rank (0 without tensor parallelism)
	 * @param peers loads the metadata of producers
	 */
	public KvConsumer(PagedKvCache cache, int rank, PeerLoader peers) {
		this(cache, rank, peers, KvMessages.DEFAULT_PREFIX, KvProducer.DEFAULT_PEER_TIMEOUT);
	}

	/**
	 * Creates a consumer without a directory: it learns producers through
	 * {@link #connect}.
	 * @param cache the cache blocks are pulled into
	 * @param rank this consumer's tensor-parallel rank (0 without tensor parallelism)
	 * @param peers loads the metadata of producers
	 * @param prefix the prefix of the protocol's notifications (the producers must use
	 * the same)
	 * @param peerTimeout how long loading a producer's metadata may take
	 */
	public KvConsumer(PagedKvCache cache, int rank, PeerLoader peers, String prefix, Duration peerTimeout) {
		this(cache, rank, peers, null, prefix, peerTimeout, DEFAULT_CONFIRMATION_RESEND, KvObserver.NONE);
	}

	private KvConsumer(PagedKvCache cache, int rank, PeerLoader peers, @Nullable KvDirectory directory, String prefix,
			Duration peerTimeout, Duration confirmationResend, KvObserver observer) {
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
	 * after it restarted, replaces the old one) and loads its metadata. A consumer with a
	 * {@link KvDirectory} does not need it.
	 * @param producer the producer's handle
	 */
	public void connect(RemoteCacheHandle producer) {
		session(producer.agentName()).connect(producer, System.nanoTime() + this.peerTimeout.toNanos());
	}

	/**
	 * Pulls a request's blocks into local blocks and waits for the producer's
	 * confirmation that its lease held them: block {@code params.blockIds()[i]} (or this
	 * rank's slice of its heads) of every region lands in block {@code localBlockIds[i]}
	 * of the same region.
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
	 * @throws NixlException {@link NixlStatus#ERROR_NOT_FOUND} for a producer not
	 * connected (without a directory), {@link NixlStatus#ERROR_INVALID_PARAM} for
	 * mismatched layouts or bad blocks, or the failure of the READ (operation
	 * {@code kv_pull}, naming the producer, with the READ's status and failure as its
	 * cause)
	 */
	public long pull(KvTransferParams params, int[] localBlockIds, Duration timeout) {
		long start = System.nanoTime();
		KvObserver.Pull observed = this.observer.pullStarted(params);
		KvPullListener[] told = this.listeners;
		long bytes;
		try {
			bytes = pull(params, localBlockIds, start + timeout.toNanos(), observed);
		}
		catch (KvLeaseLostException ex) {
			observed.end(ex.confirmation(), ex);
			pullFailed(told, params, ex, start);
			throw ex;
		}
		catch (RuntimeException ex) {
			observed.end(null, ex);
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
	public synchronized void addPullListener(KvPullListener listener) {
		Objects.requireNonNull(listener, "listener");
		KvPullListener[] grown = Arrays.copyOf(this.listeners, this.listeners.length + 1);
		grown[grown.length - 1] = listener;
		this.listeners = grown;
	}

	private void reconnected(String producer) {
		for (KvPullListener listener : this.listeners) {
			listener.reconnected(producer);
		}
	}

	private long pull(KvTransferParams params, int[] localBlockIds, long deadline, KvObserver.Pull observed) {
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
			RemoteCacheHandle remote;
			try {
				remote = session.ready(params, deadline);
			}
			catch (KvProducerUnavailableException ex) {
				// the producer is gone, or restarted: its lease went with it
				throw ex;
			}
			catch (RuntimeException ex) {
				// an incompatible producer gets its lease back too: a consumer
				// that cannot read the blocks must not hold them till expiry
				release(params);
				throw ex;
			}
			// Arguments that do not describe a pull leave the lease alone;
			// a pull that fails from here on gives it back.
			int slice = checkRemote(params, remote, remoteIds);
			try {
				read(params, remote, localBlockIds, remoteIds, slice, deadline, observed);
				return localBlockIds.length * (long) own.regionCount() * own.blockLength();
			}
			catch (NotPosted ex) {
				NixlException failure = ex.failure;
				boolean reset = failure.status() == NixlStatus.ERROR_BACKEND
						&& session.reset(remote, failure.detail(), deadline);
				if (reset && post < MAX_POSTS && deadline - System.nanoTime() > 0) {
					// nothing was posted: no byte moved, the lease stands
					continue;
				}
				release(params);
				throw session.explain(params, failure);
			}
			catch (KvLeaseLostException ex) {
				if (ex.confirmation() == null) {
					release(params);
				}
				// else the producer answered: the lease is no longer held
				throw ex;
			}
			catch (NixlException ex) {
				if (ex.status() == NixlStatus.ERROR_BACKEND) {
					session.reset(remote, ex.detail(), deadline);
				}
				release(params);
				throw session.explain(params, ex);
			}
			catch (RuntimeException | Error ex) {
				release(params);
				throw ex;
			}
		}
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
				this.directory, this.peerTimeout, this::reconnected));
	}

	/**
	 * Returns how many pulls failed with {@link KvIntegrityException}: data that landed
	 * under a confirmed lease did not match the producer's checksums.
	 * @return the count since this consumer was created
	 */
	public long integrityFailures() {
		return this.integrityFailures.get();
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
		return this.confirmationResends.get();
	}

	/**
	 * Compares the CRC32C of each local block with the producer's checksum of the slice
	 * this rank read.
	 */
	private void verify(KvTransferParams params, int[] localBlockIds, int[] remoteIds, int slice) {
		List<Integer> checksums = params.checksums();
		if (checksums.isEmpty()) {
			return;
		}
		int n = localBlockIds.length;
		for (int i = 0; i < n; i++) {
			if (this.cache.crc32c(localBlockIds[i], 1, 0) != checksums.get(slice * n + i)) {
				this.integrityFailures.incrementAndGet();
				throw new KvIntegrityException(this.agent.name(), params.producerAgent(), params.requestId(),
						remoteIds[i], localBlockIds[i], slice);
			}
		}
	}

	/**
	 * READs the blocks and waits for the producer's confirmation.
	 * @throws NotPosted when the READ failed before it was posted: no byte moved
	 */
	private void read(KvTransferParams params, RemoteCacheHandle remote, int[] localBlockIds, int[] remoteIds,
			int slice, long deadline, KvObserver.Pull observed) {
		String producer = params.producerAgent();
		int ranks = params.consumerRanks();
		String ackPrefix = KvMessages.ackPrefix(this.prefix, params.requestId(), params.leaseId(), slice);
		NotificationMatcher ackMatcher = NotificationMatcher.prefix(producer, ackPrefix);
		CompletableFuture<Notification> ack = this.agent.expectNotification(ackMatcher, remaining(deadline));
		// names this READ, so that the producer tells a repeat of its done message from
		// the done message of another READ of the lease
		long read = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
		byte[] done = KvMessages.done(this.prefix, params.requestId(), params.leaseId(), slice, params.generation(),
				read, observed.traceContext());
		boolean posted = false;
		KvObserver.Step reading = observed.read();
		try (Transfer transfer = this.cache.createBlockTransfer(XferOp.READ, localBlockIds, remote, ranks, slice,
				remoteIds, done)) {
			posted = !failedToPost(transfer.post());
			transfer.await(remaining(deadline));
		}
		catch (NixlException ex) {
			reading.end(null, ex);
			// a READ given up while in flight may still land, and be answered
			boolean mayLand = posted && (ex.status() == NixlStatus.TIMEOUT || ex.status() == NixlStatus.CANCELLED);
			giveUpAnswer(ackMatcher, ack, mayLand);
			// The READ itself failed (the producer's connection dropped, say): no lease
			// expired.
			NixlException failure = new NixlException(ex.status(), "kv_pull", this.agent.name(), producer,
					"reading the blocks of request '" + params.requestId() + "' from producer '" + producer
							+ "' failed: " + ex.getMessage(),
					ex, ex.retryable() || ex.status() == NixlStatus.ERROR_BACKEND);
			if (!posted) {
				throw new NotPosted(failure);
			}
			throw failure;
		}
		catch (RuntimeException ex) {
			reading.end(null, ex);
			giveUpAnswer(ackMatcher, ack, posted);
			throw ex;
		}
		long landed = System.nanoTime();
		reading.end(null, null);
		KvObserver.Step confirming = observed.confirmation();
		Resent resent = awaitAnswer(producer, ack, done, deadline);
		Notification answer = resent.answer();
		LeaseConfirmation confirmation = (answer != null) ? KvMessages.parseAck(ackPrefix, answer.text()) : null;
		confirming.end(confirmation, resent.failure());
		if (answer == null) {
			// The READ landed, so the producer may still answer each done message sent:
			// take those answers when they come.
			dropLateAnswers(ackMatcher, 1 + resent.resends(), LATE_ANSWER);
			throw new KvLeaseLostException(this.agent.name(), producer, params.requestId(), null,
					"no confirmation of the lease of request '" + params.requestId() + "' (lease " + params.leaseId()
							+ ") came in time: the blocks read must not be used",
					resent.failure());
		}
		long answered = System.nanoTime() - landed;
		for (KvPullListener listener : this.listeners) {
			listener.confirmed(producer, answered);
		}
		// each done message repeated may be answered too: those answers are dropped
		dropLateAnswers(ackMatcher, resent.resends(), DUPLICATE_ANSWER);
		if (confirmation != LeaseConfirmation.HELD) {
			LeaseConfirmation refused = (confirmation != null) ? confirmation : LeaseConfirmation.UNKNOWN;
			throw new KvLeaseLostException(this.agent.name(), producer, params.requestId(), refused,
					"the producer answered " + refused + " for request '" + params.requestId() + "' (lease "
							+ params.leaseId() + "): its blocks may have been reused, the data read must not be used",
					null);
		}
		verify(params, localBlockIds, remoteIds, slice);
	}

	/**
	 * Waits for the producer's answer to a READ that completed. When none came within the
	 * resend bound, the done message is sent again on its own (the READ's notification or
	 * the answer may have been lost; the producer answers a repeat as it answered the
	 * first), and again after each further bound, doubled, up to
	 * {@link #MAX_CONFIRMATION_RESENDS} times, until the answer comes or the deadline
	 * passes.
	 * @return the answer, or why none came by the deadline
	 */
	private Resent awaitAnswer(String producer, CompletableFuture<Notification> ack, byte[] done, long deadline) {
		long bound = this.confirmationResend.toNanos();
		int resends = 0;
		while (bound > 0 && resends < MAX_CONFIRMATION_RESENDS) {
			long left = deadline - System.nanoTime();
			if (left <= bound) {
				break;
			}
			try {
				return new Resent(ack.get(bound, TimeUnit.NANOSECONDS), null, resends);
			}
			catch (TimeoutException ex) {
				resends++;
				resend(producer, done);
				bound = Math.min(bound * 2, Long.MAX_VALUE / 4);
			}
			catch (ExecutionException ex) {
				return new Resent(null, ex.getCause(), resends);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				ack.cancel(false);
				return new Resent(null, ex, resends);
			}
		}
		try {
			return new Resent(ack.join(), null, resends);
		}
		catch (CompletionException ex) {
			return new Resent(null, ex.getCause(), resends);
		}
	}

	/**
	 * Sends a done message again on its own. Counted even when the send fails: the wait
	 * for the answer goes on until the deadline whatever the send did.
	 */
	private void resend(String producer, byte[] done) {
		this.confirmationResends.incrementAndGet();
		try {
			this.agent.sendNotification(producer, done);
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.DEBUG, "Could not repeat a done message to ''{0}'': {1}", producer,
					ex.getMessage());
		}
	}

	/**
	 * Waits for up to {@code count} answers that may still come, one after the other, and
	 * drops them, so that none sits in the mailbox. One wait at a time per pull: the next
	 * starts when the previous took an answer, and none after one waited {@code wait} in
	 * vain.
	 */
	private void dropLateAnswers(NotificationMatcher ackMatcher, int count, Duration wait) {
		if (count <= 0) {
			return;
		}
		try {
			this.agent.expectNotification(ackMatcher, wait).thenRun(() -> dropLateAnswers(ackMatcher, count - 1, wait));
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.DEBUG, "Cannot wait for a late confirmation: {0}", ex.getMessage());
		}
	}

	/**
	 * The answer to a READ (or why none came) and how many times its done message was
	 * sent again.
	 */
	private record Resent(@Nullable Notification answer, @Nullable Throwable failure, int resends) {
	}

	/**
	 * Whether the engine refused to post a transfer: it failed in {@code post_xfer_req},
	 * so that nothing was transferred and no notification sent.
	 */
	private static boolean failedToPost(CompletableFuture<Transfer> completion) {
		return completion.state() == Future.State.FAILED && completion.exceptionNow() instanceof NixlException ex
				&& POST_OPERATION.equals(ex.operation());
	}

	/**
	 * Stops waiting for the confirmation of a READ that failed on this side. When the
	 * READ may still land, the producer may answer it later: that answer is waited for
	 * and dropped, so it does not sit in the mailbox, where a retried pull of the same
	 * lease would take it for the answer to its own READ.
	 */
	private void giveUpAnswer(NotificationMatcher ackMatcher, CompletableFuture<Notification> ack, boolean mayLand) {
		ack.cancel(false);
		if (!mayLand || !ack.isCompletedExceptionally()) {
			// the answer came already, and was taken by the wait
			return;
		}
		try {
			this.agent.expectNotification(ackMatcher, LATE_ANSWER);
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.DEBUG, "Cannot wait for a late confirmation: {0}", ex.getMessage());
		}
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

	private static Duration remaining(long deadline) {
		return Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
	}

	private NixlException invalid(String producer, String detail) {
		return new NixlException(NixlStatus.ERROR_INVALID_PARAM, "kv_pull", this.agent.name(), producer, detail);
	}

	/**
	 * A READ that failed before it was posted, so that no byte moved.
	 */
	private static final class NotPosted extends RuntimeException {

		private static final long serialVersionUID = 1L;

		private final transient NixlException failure;

		NotPosted(NixlException failure) {
			super(failure.getMessage(), failure, false, false);
			this.failure = failure;
		}

	}

	/**
	 * Builds a {@link KvConsumer}.
	 */
	public static final class Builder {

		private final PagedKvCache cache;

		private int rank;

		private @Nullable PeerLoader peers;

		private @Nullable KvDirectory directory;

		private String prefix = KvMessages.DEFAULT_PREFIX;

		private Duration peerTimeout = KvProducer.DEFAULT_PEER_TIMEOUT;

		private Duration confirmationResend = DEFAULT_CONFIRMATION_RESEND;

		private KvObserver observer = KvObserver.NONE;

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
		 * Sets how producers' metadata is loaded (required).
		 * @param peers the loader
		 * @return this builder
		 */
		public Builder peers(PeerLoader peers) {
			this.peers = Objects.requireNonNull(peers, "peers");
			return this;
		}

		/**
		 * Sets where producers are found by name; without one, the application gives each
		 * producer's handle ({@link KvConsumer#connect}).
		 * @param directory the directory
		 * @return this builder
		 */
		public Builder directory(KvDirectory directory) {
			this.directory = Objects.requireNonNull(directory, "directory");
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
		 * Builds the consumer.
		 * @return the consumer
		 * @throws IllegalStateException when no {@link #peers} loader was set
		 */
		public KvConsumer build() {
			if (this.peers == null) {
				throw new IllegalStateException("a KvConsumer needs a PeerLoader");
			}
			return new KvConsumer(this.cache, this.rank, this.peers, this.directory, this.prefix, this.peerTimeout,
					this.confirmationResend, this.observer);
		}

	}

}
