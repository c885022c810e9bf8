package dev.nixl4j.kv;

import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.concurrent.locks.ReentrantLock;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * A {@link KvConsumer}'s session with one producer: the producer's handle as last
 * resolved, whether its metadata is loaded and its connection usable, and the transitions
 * between them. Pulls ask it for a ready handle ({@link #ready}); a pull whose transfer
 * failed in the backend resets it ({@link #reset}), so that both sides forget the
 * connection and the next pull connects anew.
 *
 * <p>
 * One resolution at a time per producer, each waiting for the lock no longer than its
 * caller's deadline. Nothing waits for the directory while holding the lock, except the
 * first resolution of a producer never seen (it may be starting): a lease of an
 * incarnation the session saw replaced fails at once without the lock, and one of an
 * incarnation the directory does not show yet is waited for outside it.
 */
final class ProducerSession {

	private static final System.Logger logger = System.getLogger(ProducerSession.class.getName());

	/** How often a handle that lags behind a lease's incarnation is asked for again. */
	private static final Duration LAGGING_HANDLE_POLL = Duration.ofMillis(20);

	/**
	 * How many replaced incarnations of the producer a session remembers, to fail their
	 * leases at once: a producer restarts far less often than its leases expire.
	 */
	static final int REMEMBERED_INCARNATIONS = 16;

	private final String producer;

	private final PagedKvCache cache;

	private final NixlAgent agent;

	private final PeerLoader peers;

	private final @Nullable KvDirectory directory;

	private final Duration peerTimeout;

	private final ReentrantLock lock = new ReentrantLock();

	private volatile @Nullable RemoteCacheHandle handle;

	private volatile KvSessionState state = KvSessionState.NEW;

	private volatile Instant since = Instant.now();

	private volatile @Nullable String reason;

	private volatile long reconnects;

	/**
	 * Incarnations of the producer that another replaced, the latest last; guarded by
	 * itself.
	 */
	private final Set<String> replaced = new LinkedHashSet<>();

	/** The incarnation that replaced the latest of {@link #replaced}; guarded by it. */
	private String successor = "";

	private final Consumer<String> onReconnect;

	ProducerSession(String producer, PagedKvCache cache, PeerLoader peers, @Nullable KvDirectory directory,
			Duration peerTimeout, Consumer<String> onReconnect) {
		this.onReconnect = onReconnect;
		this.producer = producer;
		this.cache = cache;
		this.agent = cache.agent();
		this.peers = peers;
		this.directory = directory;
		this.peerTimeout = peerTimeout;
	}

	KvProducerSession snapshot() {
		RemoteCacheHandle current = this.handle;
		return new KvProducerSession(this.producer, this.state, (current != null) ? current.incarnation() : "",
				this.since, this.reason, this.reconnects);
	}

	KvSessionState state() {
		return this.state;
	}

	/** Learns a handle given by the application ({@link KvConsumer#connect}). */
	void connect(RemoteCacheHandle given, long deadline) {
		lock(deadline);
		try {
			RemoteCacheHandle current = this.handle;
			if (current != null && !current.equals(given)) {
				replaced(current, given);
			}
			this.peers.load(this.agent, this.producer, bounded(deadline));
			this.handle = given;
			enter(KvSessionState.CONNECTED, null);
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Returns the producer's handle, ready to pull the lease of {@code params}: resolved
	 * (through the directory) when it is not yet, after a reset, or when the lease names
	 * another incarnation; checked against this cache; this agent announced; the
	 * producer's metadata loaded.
	 * @throws KvProducerUnavailableException when the producer is gone or restarted since
	 * it took the lease
	 * @throws KvIncompatibleException when its cache cannot exchange blocks with this one
	 * @throws NixlException when the directory or the metadata cannot be reached
	 */
	RemoteCacheHandle ready(KvTransferParams params, long deadline) {
		String wanted = params.producerIncarnation();
		while (true) {
			RemoteCacheHandle connected = connectedTo(wanted);
			if (connected != null) {
				return connected;
			}
			requireNotReplaced(wanted);
			lock(deadline);
			try {
				// while this one waited, another pull may have connected, or seen the
				// lease's incarnation replaced
				connected = connectedTo(wanted);
				if (connected != null) {
					return connected;
				}
				requireNotReplaced(wanted);
				if (this.directory == null) {
					return loadGiven(wanted, deadline);
				}
				RemoteCacheHandle ready = resolveAndLoad(this.directory, wanted, deadline);
				if (ready != null) {
					return ready;
				}
			}
			finally {
				this.lock.unlock();
			}
			// the lease names an incarnation the directory does not show yet: wait for it
			// without the lock, so that pulls of the incarnation it shows go on
			awaitIncarnation(Objects.requireNonNull(this.directory), wanted, deadline);
		}
	}

	/**
	 * Fails a lease of an incarnation that this session saw replaced by another: the
	 * lease went with the old process. Needs no lock and asks no one.
	 */
	private void requireNotReplaced(String wanted) {
		String now = successorOf(wanted);
		if (now != null) {
			throw restarted(now, wanted, null);
		}
	}

	/**
	 * The incarnation known to have replaced one, {@code ""} when not known which; or
	 * {@code null} when it is not known to be replaced.
	 */
	private @Nullable String successorOf(String incarnation) {
		if (incarnation.isEmpty()) {
			return null;
		}
		synchronized (this.replaced) {
			return this.replaced.contains(incarnation) ? this.successor : null;
		}
	}

	/** Remembers that an incarnation of the producer was replaced by another. */
	private void retire(String incarnation, String successor) {
		if (incarnation.isEmpty() || incarnation.equals(successor)) {
			return;
		}
		synchronized (this.replaced) {
			this.successor = successor;
			this.replaced.remove(successor);
			this.replaced.remove(incarnation);
			this.replaced.add(incarnation);
			if (this.replaced.size() > REMEMBERED_INCARNATIONS) {
				Iterator<String> oldest = this.replaced.iterator();
				oldest.next();
				oldest.remove();
			}
		}
	}

	/**
	 * The handle, when the session is connected to the incarnation a lease names
	 * ({@code ""}: any) and the producer's metadata is still loaded; else {@code null}.
	 */
	private @Nullable RemoteCacheHandle connectedTo(String wanted) {
		RemoteCacheHandle current = this.handle;
		boolean usable = current != null && this.state == KvSessionState.CONNECTED
				&& (wanted.isEmpty() || wanted.equals(current.incarnation()))
				&& this.agent.hasRemoteMetadata(this.producer);
		return usable ? current : null;
	}

	/**
	 * Fails when the session can never be ready: it has no directory and the application
	 * gave no handle. Nothing about the lease is known to be wrong then.
	 */
	void requireResolvable() {
		if (this.directory == null && this.handle == null) {
			throw new NixlException(NixlStatus.ERROR_NOT_FOUND, "kv_pull", this.agent.name(), this.producer,
					"producer '" + this.producer + "' is not connected: pass its RemoteCacheHandle to connect() first,"
							+ " or give the consumer a KvDirectory");
		}
	}

	/**
	 * Loads the producer of the handle the application gave ({@link #requireResolvable}).
	 */
	private RemoteCacheHandle loadGiven(String wanted, long deadline) {
		RemoteCacheHandle current = Objects.requireNonNull(this.handle);
		if (!wanted.isEmpty() && !current.incarnation().isEmpty() && !wanted.equals(current.incarnation())) {
			throw restarted(current.incarnation(), wanted, null);
		}
		load(deadline);
		enter(KvSessionState.CONNECTED, null);
		return current;
	}

	/**
	 * Resolves the producer and connects to the incarnation the lease names; under the
	 * lock.
	 * @return the handle, or {@code null} when the directory shows another incarnation
	 * than the lease's and this session never saw the lease's (it may be newer: the
	 * producer restarted and leased before its handle reached the directory)
	 */
	private @Nullable RemoteCacheHandle resolveAndLoad(KvDirectory directory, String wanted, long deadline) {
		RemoteCacheHandle current = this.handle;
		RemoteCacheHandle resolved = resolve(directory, wanted, deadline);
		if (!wanted.isEmpty() && !wanted.equals(resolved.incarnation())) {
			if (current != null && wanted.equals(current.incarnation())) {
				// the producer restarted after it took this lease: the lease went with it
				restartedAs(current, resolved);
				throw restarted(resolved.incarnation(), wanted, null);
			}
			return null;
		}
		requireCompatible(resolved);
		if (current != null && !current.equals(resolved)) {
			replaced(current, resolved);
		}
		directory.announce();
		load(deadline);
		this.handle = resolved;
		enter(KvSessionState.CONNECTED, null);
		return resolved;
	}

	/**
	 * Fetches the producer's handle. Only a producer never resolved yet is waited for (it
	 * may be starting); one this session knew (gone, reconnecting after a failure, or
	 * forgotten because the exchange withdrew it) is asked for once, so that a pull fails
	 * at once while the producer stays away and succeeds at once when it is back.
	 */
	private RemoteCacheHandle resolve(KvDirectory directory, String wanted, long deadline) {
		Duration wait = (this.state == KvSessionState.NEW) ? bounded(deadline) : Duration.ZERO;
		try {
			return directory.resolve(this.producer, wait);
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.TIMEOUT || ex.status() == NixlStatus.ERROR_NOT_FOUND) {
				enter(KvSessionState.GONE, "its KV cache handle is not published");
				RemoteCacheHandle known = this.handle;
				throw new KvProducerUnavailableException(this.agent.name(), this.producer, KvSessionState.GONE,
						"producer '" + this.producer + "' publishes no KV cache handle (it stopped, or its entry"
								+ " expired)" + (wanted.isEmpty() ? "" : "; the lease is of incarnation " + wanted)
								+ ((known == null || known.incarnation().isEmpty()) ? ""
										: ", the last one resolved is " + known.incarnation()),
						ex);
			}
			throw ex;
		}
	}

	/**
	 * Waits, without the lock, until the directory shows the lease's incarnation, which a
	 * producer that restarted and leased before its new handle reached the directory
	 * publishes soon; bounded by the peer timeout and the caller's deadline. Fails at
	 * once when another pull sees the incarnation replaced meanwhile.
	 */
	private void awaitIncarnation(KvDirectory directory, String wanted, long deadline) {
		long until = System.nanoTime() + bounded(deadline).toNanos();
		String latest = "";
		while (true) {
			try {
				latest = directory.resolve(this.producer, Duration.ZERO).incarnation();
				if (wanted.equals(latest)) {
					return;
				}
			}
			catch (NixlException ex) {
				if (ex.status() != NixlStatus.TIMEOUT && ex.status() != NixlStatus.ERROR_NOT_FOUND) {
					throw ex;
				}
				// not published for a moment: a restarting producer publishes again
				latest = "";
			}
			requireNotReplaced(wanted);
			if (System.nanoTime() - until >= 0) {
				throw restarted(latest, wanted, null);
			}
			try {
				Thread.sleep(LAGGING_HANDLE_POLL);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new NixlException(NixlStatus.CANCELLED, "kv_resolve", this.agent.name(), this.producer,
						"interrupted while waiting for the handle of incarnation " + wanted, ex);
			}
		}
	}

	private void requireCompatible(RemoteCacheHandle resolved) {
		RemoteCacheHandle own = this.cache.handle();
		if (!compatible(resolved, own)) {
			enter(KvSessionState.INCOMPATIBLE,
					"its KV cache " + resolved.compatibility() + " does not match " + own.compatibility());
			throw new KvIncompatibleException(this.agent.name(), this.producer, resolved.compatibility(),
					own.compatibility());
		}
	}

	/**
	 * Whether blocks of {@code remote} can land in {@code own}: same model, and the same
	 * layout once the producer's heads are split over the consumer's ranks.
	 */
	static boolean compatible(RemoteCacheHandle remote, RemoteCacheHandle own) {
		if (!remote.modelFingerprint().equals(own.modelFingerprint())) {
			return false;
		}
		int heads = remote.layout().numKvHeads();
		int ownHeads = own.layout().numKvHeads();
		if (heads % ownHeads != 0) {
			return false;
		}
		try {
			return remote.layout().headSlice(heads / ownHeads).fingerprint().equals(own.layout().fingerprint());
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
	}

	private void load(long deadline) {
		try {
			this.peers.load(this.agent, this.producer, bounded(deadline));
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.ERROR_NOT_FOUND || ex.status() == NixlStatus.TIMEOUT) {
				enter(KvSessionState.GONE, "its metadata is not published");
				throw new KvProducerUnavailableException(this.agent.name(), this.producer, KvSessionState.GONE,
						"the metadata of producer '" + this.producer + "' cannot be loaded: " + ex.detail(), ex);
			}
			throw new NixlException(ex.status(), "kv_pull", this.agent.name(), this.producer,
					"loading the metadata of producer '" + this.producer + "' failed: " + ex.getMessage(), ex,
					ex.retryable());
		}
	}

	/**
	 * Makes both sides forget the connection after a transfer with {@code failed} failed
	 * in the backend: this agent forgets the producer's metadata and prepared lists, and
	 * publishes its own again so that the producer, which watches it, forgets it too and
	 * loads it again for its next answer. Once per handle: pulls that failed with the
	 * same connection find it reset already.
	 * @return whether this call reset the session
	 */
	boolean reset(RemoteCacheHandle failed, String why, long deadline) {
		if (!this.lock.tryLock()) {
			// another thread is resolving or resetting the session right now
			return false;
		}
		try {
			if (this.handle != failed || this.state != KvSessionState.CONNECTED) {
				return false;
			}
			logger.log(System.Logger.Level.INFO,
					"A transfer from ''{0}'' failed in the backend: both sides forget the connection and connect"
							+ " again",
					this.producer);
			forget();
			reconnecting(why);
			if (this.directory != null) {
				try {
					this.directory.reannounce();
				}
				catch (NixlException | IllegalStateException ex) {
					// the next pull announces again
					logger.log(System.Logger.Level.WARNING, "Could not publish agent ''{0}'' again: {1}",
							this.agent.name(), ex.getMessage());
				}
			}
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Tells why a transfer of a lease failed in the backend ({@code ERROR_BACKEND}; other
	 * failures are returned as they are) when the directory knows better: the producer
	 * restarted since it took the lease, or it is gone.
	 * @param params the lease
	 * @param failure the transfer's failure
	 * @return a {@link KvProducerUnavailableException} with the failure as its cause, or
	 * the failure itself
	 */
	NixlException explain(KvTransferParams params, NixlException failure) {
		String leased = params.producerIncarnation();
		String successor = successorOf(leased);
		if (successor != null) {
			// whatever failed, the lease's incarnation is known to be replaced (another
			// pull may have forgotten its metadata while this one prepared its READ)
			return restarted(successor, leased, failure);
		}
		if (failure.status() != NixlStatus.ERROR_BACKEND || this.directory == null || leased.isEmpty()) {
			return failure;
		}
		RemoteCacheHandle now;
		try {
			now = this.directory.resolve(this.producer, Duration.ZERO);
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.TIMEOUT || ex.status() == NixlStatus.ERROR_NOT_FOUND) {
				enter(KvSessionState.GONE, "its KV cache handle is not published");
				return new KvProducerUnavailableException(this.agent.name(), this.producer, KvSessionState.GONE,
						"producer '" + this.producer + "' failed and publishes no KV cache handle now (it stopped, or"
								+ " its entry expired)",
						failure);
			}
			return failure;
		}
		if (leased.equals(now.incarnation())) {
			return failure;
		}
		RemoteCacheHandle current = this.handle;
		if (current != null && leased.equals(current.incarnation())) {
			// the incarnation this session connected to is replaced: its other leases
			// fail at once from now on
			retire(leased, now.incarnation());
		}
		return restarted(now.incarnation(), leased, failure);
	}

	/** Forgets the producer's metadata and the lists prepared with it. */
	private void forget() {
		try {
			if (this.agent.hasRemoteMetadata(this.producer)) {
				this.agent.invalidateRemoteMetadata(this.producer);
			}
		}
		catch (NixlException ex) {
			logger.log(System.Logger.Level.DEBUG, "Could not invalidate the metadata of ''{0}'': {1}", this.producer,
					ex.getMessage());
		}
		this.cache.forgetRemote(this.producer);
	}

	/**
	 * Forgets the connection to a handle that another replaces (the producer restarted):
	 * a reconnect, unless the loss of the old one was counted already. Leases of the old
	 * incarnation fail at once from now on.
	 */
	private void replaced(RemoteCacheHandle old, RemoteCacheHandle replacement) {
		retire(old.incarnation(), replacement.incarnation());
		forget();
		if (this.state != KvSessionState.RECONNECTING) {
			countReconnect();
		}
	}

	/**
	 * Takes note, under the lock, that the directory shows another incarnation of the
	 * producer than the one this session connected to: the old one is retired and its
	 * connection forgotten; the session knows the new handle and connects to it (checking
	 * it first) on the next pull of one of its leases.
	 */
	private void restartedAs(RemoteCacheHandle old, RemoteCacheHandle replacement) {
		retire(old.incarnation(), replacement.incarnation());
		forget();
		this.handle = replacement;
		reconnecting("producer restarted: incarnation " + old.incarnation() + " replaced by "
				+ (replacement.incarnation().isEmpty() ? "one of an unknown incarnation"
						: "incarnation " + replacement.incarnation()));
	}

	/** Enters {@link KvSessionState#RECONNECTING}, counting the loss once. */
	private void reconnecting(String why) {
		if (this.state != KvSessionState.RECONNECTING) {
			countReconnect();
		}
		enter(KvSessionState.RECONNECTING, why);
	}

	/** Counts a reconnect; under the lock. */
	private void countReconnect() {
		this.reconnects++;
		this.onReconnect.accept(this.producer);
	}

	private void enter(KvSessionState next, @Nullable String why) {
		if (this.state != next) {
			this.since = Instant.now();
		}
		this.state = next;
		this.reason = why;
	}

	private KvProducerUnavailableException restarted(String now, String leased, @Nullable Throwable cause) {
		return new KvProducerUnavailableException(this.agent.name(), this.producer, this.state,
				"producer '" + this.producer + "' took this lease as incarnation " + leased + " but is now "
						+ (now.isEmpty() ? "of an unknown incarnation" : "incarnation " + now)
						+ ": it restarted, and the lease went with the old process",
				cause);
	}

	private void lock(long deadline) {
		try {
			if (!this.lock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
				throw new NixlException(NixlStatus.TIMEOUT, "kv_pull", this.agent.name(), this.producer,
						"the session with producer '" + this.producer + "' was being connected by another pull until"
								+ " the deadline");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new NixlException(NixlStatus.CANCELLED, "kv_pull", this.agent.name(), this.producer,
					"interrupted while waiting for the session with producer '" + this.producer + "'", ex);
		}
	}

	/** The peer timeout, cut to the caller's deadline. */
	private Duration bounded(long deadline) {
		long remaining = Math.max(0, deadline - System.nanoTime());
		return Duration.ofNanos(Math.min(remaining, this.peerTimeout.toNanos()));
	}

	@Override
	public String toString() {
		return "ProducerSession[" + this.producer + ", " + this.state + "]";
	}

}
