package dev.nixl4j.sample.api;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * {@code POST /prefill}: a request id and its prompt, as text or as token ids (one of the
 * two), and the consumer that will read the blocks.
 *
 * @param requestId the request, unique while its blocks are leased
 * @param prompt the prompt as text (the language model's chat template applies; with the
 * toy model one token per UTF-8 byte), or {@code null}
 * @param tokens the prompt as token ids, or {@code null}
 * @param consumerAgent the agent name of the decode worker that will read the blocks: the
 * prefill worker's share of blocks per consumer counts by it; {@code null} for none
 * @param temperature the sampling temperature of the first token, or {@code null} for
 * greedy
 * @param topP the nucleus of top-p sampling, or {@code null} for 1
 * @param seed the seed of sampling, or {@code null} for 0
 */
public record PrefillRequest(String requestId, @Nullable String prompt, @Nullable List<Integer> tokens,
		@Nullable String consumerAgent, @Nullable Float temperature, @Nullable Float topP, @Nullable Long seed) {

	/**
	 * A request that names no consumer, its first token picked greedily.
	 * @param requestId the request, unique while its blocks are leased
	 * @param prompt the prompt as text, or {@code null}
	 * @param tokens the prompt as token ids, or {@code null}
	 */
	public PrefillRequest(String requestId, @Nullable String prompt, @Nullable List<Integer> tokens) {
		this(requestId, prompt, tokens, null);
	}

	/**
	 * A request whose first token is picked greedily.
	 * @param requestId the request, unique while its blocks are leased
	 * @param prompt the prompt as text, or {@code null}
	 * @param tokens the prompt as token ids, or {@code null}
	 * @param consumerAgent the consumer, or {@code null}
	 */
	public PrefillRequest(String requestId, @Nullable String prompt, @Nullable List<Integer> tokens,
			@Nullable String consumerAgent) {
		this(requestId, prompt, tokens, consumerAgent, null, null, null);
	}

	/**
	 * Returns this request for another consumer.
	 * @param consumer the consumer's agent name
	 * @return the request
	 */
	public PrefillRequest withConsumer(String consumer) {
		return new PrefillRequest(this.requestId, this.prompt, this.tokens, consumer, this.temperature, this.topP,
				this.seed);
	}

	/**
	 * Returns how the first token is sampled.
	 * @return the sampling settings
	 */
	public Sampling sampling() {
		return new Sampling(this.temperature, this.topP, this.seed);
	}

}
