package dev.nixl4j.sample.prefill;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.SampleProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;

/**
 * The shares of the prefill worker's KV cache: a request may lease at most
 * {@code sample.prefill.max-blocks-per-request} blocks, and one consumer (a decode
 * worker's agent) at most {@code sample.prefill.max-blocks-per-consumer} at once, so that
 * no caller can take the whole cache. A share is taken before any block is allocated and
 * given back when its lease ends.
 */
final class BlockShares {

	/** The consumer that requests naming none count as. */
	static final String UNNAMED = "";

	private static final int MAX_CONSUMER_NAME = 256;

	private final int perRequest;

	private final int perConsumer;

	private final Duration retryAfter;

	/** Blocks held per consumer; a consumer without blocks has no entry. */
	private final Map<String, Integer> held = new HashMap<>();

	BlockShares(int capacity, SampleProperties.Prefill properties) {
		this(capacity, properties, Duration.ofSeconds(1));
	}

	BlockShares(int capacity, SampleProperties.Prefill properties, Duration retryAfter) {
		this.retryAfter = retryAfter;
		this.perRequest = limit(properties.getMaxBlocksPerRequest(), Math.max(1, capacity / 4),
				"sample.prefill.max-blocks-per-request");
		this.perConsumer = limit(properties.getMaxBlocksPerConsumer(), Math.max(1, capacity * 3 / 4),
				"sample.prefill.max-blocks-per-consumer");
	}

	private static int limit(@Nullable Integer configured, int fallback, String property) {
		if (configured == null) {
			return fallback;
		}
		if (configured <= 0) {
			throw new IllegalStateException(property + " must be positive, not " + configured);
		}
		return configured;
	}

	int perRequest() {
		return this.perRequest;
	}

	int perConsumer() {
		return this.perConsumer;
	}

	/**
	 * Takes a share of blocks for a request.
	 * @param consumer the consumer's agent name, or {@code null} when the request names
	 * none
	 * @param requestId the request
	 * @param blocks the blocks it needs
	 * @return the share, to be closed when its blocks are no longer leased
	 * @throws SampleException 400 for a consumer name that is not acceptable, 429 when
	 * the request or its consumer would pass its share (with Retry-After for the
	 * consumer's share, which frees up as leases end); nothing is taken then
	 */
	Share take(@Nullable String consumer, String requestId, int blocks) {
		String name = consumerName(consumer);
		if (blocks > this.perRequest) {
			throw new SampleException(HttpStatus.TOO_MANY_REQUESTS, "Request over its share",
					"request '" + requestId + "' needs " + blocks + " KV blocks; one request may lease at most "
							+ this.perRequest + " (sample.prefill.max-blocks-per-request): shorten the prompt");
		}
		synchronized (this.held) {
			int current = this.held.getOrDefault(name, 0);
			if (current + blocks > this.perConsumer) {
				throw new SampleException(HttpStatus.TOO_MANY_REQUESTS, "Consumer over its share",
						"request '" + requestId + "' needs " + blocks + " KV blocks; its consumer " + describe(name)
								+ " holds " + current + " of the " + this.perConsumer
								+ " it may lease at once (sample.prefill.max-blocks-per-consumer): retry when its"
								+ " leases end",
						null, this.retryAfter);
			}
			this.held.put(name, current + blocks);
		}
		return new Share(name, blocks);
	}

	/**
	 * Returns the blocks a consumer holds now.
	 * @param consumer the consumer's agent name, or {@code null} for the unnamed one
	 * @return its blocks
	 */
	int held(@Nullable String consumer) {
		synchronized (this.held) {
			return this.held.getOrDefault(Objects.requireNonNullElse(consumer, UNNAMED), 0);
		}
	}

	private void giveBack(String consumer, int blocks) {
		synchronized (this.held) {
			int left = this.held.getOrDefault(consumer, 0) - blocks;
			if (left > 0) {
				this.held.put(consumer, left);
			}
			else {
				this.held.remove(consumer);
			}
		}
	}

	private static String consumerName(@Nullable String consumer) {
		if (consumer == null) {
			return UNNAMED;
		}
		if (consumer.isEmpty() || consumer.length() > MAX_CONSUMER_NAME
				|| consumer.chars().anyMatch(Character::isISOControl)) {
			throw SampleException.badRequest("consumerAgent must have 1 to " + MAX_CONSUMER_NAME
					+ " characters and no control characters (" + consumer.length() + " characters given)");
		}
		return consumer;
	}

	private static String describe(String consumer) {
		return consumer.equals(UNNAMED) ? "(requests that name no consumerAgent)" : "'" + consumer + "'";
	}

	/**
	 * The blocks of one request, counted in its consumer's share until closed; closing
	 * twice gives them back once.
	 */
	final class Share implements AutoCloseable {

		private final String consumer;

		private final int blocks;

		private final AtomicBoolean closed = new AtomicBoolean();

		private Share(String consumer, int blocks) {
			this.consumer = consumer;
			this.blocks = blocks;
		}

		@Override
		public void close() {
			if (this.closed.compareAndSet(false, true)) {
				giveBack(this.consumer, this.blocks);
			}
		}

	}

}
