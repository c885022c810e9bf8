package dev.nixl4j.sample.decode;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.SampleProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

/**
 * The shares of the decode worker that its callers ({@link Caller}) may hold at once, so
 * that no caller takes what others need:
 *
 * <ul>
 * <li>all callers together: {@code sample.generate.max-concurrent-requests} requests (503
 * beyond);
 * <li>each caller without a worker's token (one address):
 * {@code max-concurrent-requests-per-caller} requests and {@code max-blocks-per-caller}
 * KV blocks (429 beyond);
 * <li>all callers without a token together: {@code max-concurrent-anonymous-requests}
 * requests and {@code max-anonymous-blocks} KV blocks (503 beyond), so that token holders
 * keep the rest.
 * </ul>
 *
 * A request's blocks are its prompt's, which it holds on the prefill worker (leased) and
 * here (pulled) until it is answered; a share is taken before the prefill worker is asked
 * for anything and given back when the answer is made. Refusals are answered at once,
 * with {@code Retry-After} ({@code sample.retry-after}), except for a request that needs
 * more blocks than a caller's whole share, which retrying cannot help.
 */
final class CallerShares {

	private final int maxRequests;

	private final int perCallerRequests;

	private final int anonymousRequests;

	private final int perCallerBlocks;

	private final int anonymousBlocks;

	private final Duration retryAfter;

	/** What callers without a token hold, by caller; guarded by {@code this}. */
	private final Map<String, Held> held = new HashMap<>();

	/** Guarded by {@code this}. */
	private int requests;

	/** Guarded by {@code this}. */
	private final Held anonymous = new Held();

	/**
	 * Creates the shares.
	 * @param generate the properties ({@code sample.generate.*})
	 * @param cacheBlocks the blocks of the KV cache ({@code nixl.kv.blocks}), which the
	 * block shares default to parts of
	 * @param retryAfter what a refusal tells the caller to wait
	 * ({@code sample.retry-after})
	 */
	CallerShares(SampleProperties.Generate generate, int cacheBlocks, Duration retryAfter) {
		this.maxRequests = positive(generate.getMaxConcurrentRequests(), "max-concurrent-requests");
		this.perCallerRequests = positive(generate.getMaxConcurrentRequestsPerCaller(),
				"max-concurrent-requests-per-caller");
		this.anonymousRequests = positive(
				orElse(generate.getMaxConcurrentAnonymousRequests(), Math.max(1, this.maxRequests * 3 / 4)),
				"max-concurrent-anonymous-requests");
		this.perCallerBlocks = positive(orElse(generate.getMaxBlocksPerCaller(), Math.max(1, cacheBlocks / 4)),
				"max-blocks-per-caller");
		this.anonymousBlocks = positive(orElse(generate.getMaxAnonymousBlocks(), Math.max(1, cacheBlocks / 2)),
				"max-anonymous-blocks");
		this.retryAfter = retryAfter;
	}

	private static int orElse(@Nullable Integer configured, int fallback) {
		return (configured != null) ? configured : fallback;
	}

	private static int positive(int value, String property) {
		if (value <= 0) {
			throw new IllegalStateException("sample.generate." + property + " must be positive, not " + value);
		}
		return value;
	}

	int maxRequests() {
		return this.maxRequests;
	}

	int perCallerBlocks() {
		return this.perCallerBlocks;
	}

	int anonymousBlocks() {
		return this.anonymousBlocks;
	}

	/**
	 * Takes a share for one request: its request slot, then its blocks.
	 * @param caller who sends it
	 * @param blocks the KV blocks of its prompt
	 * @return the share, to be closed when the request is answered
	 * @throws SampleException as {@link #admitRequest} and {@link Admission#takeBlocks};
	 * nothing is taken then
	 */
	Admission admit(Caller caller, int blocks) {
		Admission admission = admitRequest(caller);
		try {
			admission.takeBlocks(blocks);
			return admission;
		}
		catch (RuntimeException ex) {
			admission.close();
			throw ex;
		}
	}

	/**
	 * Takes a request slot for a caller, before anything of its request is read.
	 * @param caller who sends it
	 * @return the share, without blocks yet, to be closed when the request is answered
	 * @throws SampleException 429 when the caller has its share of requests in progress,
	 * 503 when the worker, or its callers without a token together, have theirs; nothing
	 * is taken then
	 */
	synchronized Admission admitRequest(Caller caller) {
		if (this.requests >= this.maxRequests) {
			throw busy("Too many requests", "the decode worker serves " + this.maxRequests
					+ " requests at once (sample.generate.max-concurrent-requests); retry later");
		}
		if (!caller.holdsToken()) {
			Held mine = this.held.getOrDefault(caller.id(), Held.NONE);
			if (mine.requests >= this.perCallerRequests) {
				throw overShare("this caller has " + mine.requests + " requests in progress, as many as a caller "
						+ "without a worker's token may have (sample.generate.max-concurrent-requests-per-caller); "
						+ "retry when one is answered");
			}
			if (this.anonymous.requests >= this.anonymousRequests) {
				throw busy("Too many requests without a token",
						"callers without a worker's token have " + this.anonymousRequests
								+ " requests in progress, as many as they may have together "
								+ "(sample.generate.max-concurrent-anonymous-requests); retry later");
			}
			this.anonymous.add(1, 0);
			this.held.computeIfAbsent(caller.id(), (id) -> new Held()).add(1, 0);
		}
		this.requests++;
		return new Admission(caller);
	}

	/** Takes blocks for an admitted request; see {@link Admission#takeBlocks}. */
	private synchronized void takeBlocks(Caller caller, int blocks) {
		if (caller.holdsToken()) {
			return;
		}
		if (blocks > this.perCallerBlocks) {
			throw new SampleException(HttpStatus.TOO_MANY_REQUESTS, "Request over the caller's share",
					"the prompt needs " + blocks + " KV blocks; the requests of a caller without a worker's token "
							+ "may hold at most " + this.perCallerBlocks
							+ " at once (sample.generate.max-blocks-per-caller): shorten the prompt");
		}
		Held mine = this.held.getOrDefault(caller.id(), Held.NONE);
		if (mine.blocks + blocks > this.perCallerBlocks) {
			throw overShare("the prompt needs " + blocks + " KV blocks; this caller's requests in progress hold "
					+ mine.blocks + " of the " + this.perCallerBlocks + " a caller without a worker's token may hold "
					+ "at once (sample.generate.max-blocks-per-caller); retry when they are answered");
		}
		if (this.anonymous.blocks + blocks > this.anonymousBlocks) {
			throw busy("Too many requests without a token",
					"the prompt needs " + blocks + " KV blocks; the requests of callers without a worker's token hold "
							+ this.anonymous.blocks + " of the " + this.anonymousBlocks
							+ " they may hold together (sample.generate.max-anonymous-blocks); retry later");
		}
		this.anonymous.add(0, blocks);
		this.held.computeIfAbsent(caller.id(), (id) -> new Held()).add(0, blocks);
	}

	private synchronized void giveBack(Caller caller, int blocks) {
		this.requests--;
		if (caller.holdsToken()) {
			return;
		}
		this.anonymous.add(-1, -blocks);
		Held mine = this.held.get(caller.id());
		if (mine != null) {
			mine.add(-1, -blocks);
			if (mine.requests <= 0) {
				this.held.remove(caller.id());
			}
		}
	}

	/**
	 * What callers without a token hold now, for tests: requests and blocks, in all and
	 * of the caller.
	 */
	synchronized int[] held(Caller caller) {
		Held mine = this.held.getOrDefault(caller.id(), Held.NONE);
		return new int[] { this.requests, this.anonymous.requests, this.anonymous.blocks, mine.requests, mine.blocks };
	}

	private SampleException overShare(String detail) {
		return new SampleException(HttpStatus.TOO_MANY_REQUESTS, "Caller over its share", detail, null,
				this.retryAfter);
	}

	private SampleException busy(String title, String detail) {
		return new SampleException(HttpStatus.SERVICE_UNAVAILABLE, title, detail, null, this.retryAfter);
	}

	/** Requests and blocks held. */
	private static final class Held {

		static final Held NONE = new Held();

		int requests;

		int blocks;

		void add(int moreRequests, int moreBlocks) {
			this.requests += moreRequests;
			this.blocks += moreBlocks;
		}

	}

	/**
	 * The share of one request, held until closed; closing twice gives it back once.
	 */
	final class Admission implements AutoCloseable {

		private final Caller caller;

		/** Guarded by the shares. */
		private int blocks;

		private final AtomicBoolean closed = new AtomicBoolean();

		private Admission(Caller caller) {
			this.caller = caller;
		}

		/**
		 * Takes the blocks of the request's prompt, once its length is known.
		 * @param count the KV blocks of its prompt
		 * @throws SampleException 429 when the caller's requests would hold more than its
		 * share (without Retry-After when this one alone needs more), 503 when those of
		 * all callers without a token would; nothing is taken then
		 * @throws IllegalStateException when blocks were taken already, or the share is
		 * closed
		 */
		void takeBlocks(int count) {
			synchronized (CallerShares.this) {
				if (this.closed.get() || this.blocks != 0) {
					throw new IllegalStateException("the blocks of a request are taken once, while it holds its share");
				}
				CallerShares.this.takeBlocks(this.caller, count);
				this.blocks = count;
			}
		}

		@Override
		public void close() {
			if (this.closed.compareAndSet(false, true)) {
				synchronized (CallerShares.this) {
					giveBack(this.caller, this.blocks);
				}
			}
		}

	}

}
