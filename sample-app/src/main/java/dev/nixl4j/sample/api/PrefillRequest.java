package dev.nixl4j.sample.api;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * {@code POST /prefill}: a request id and its prompt, as text or as token ids (one of the
 * two), and the consumer that will read the blocks.
 *
 * @param requestId the request, unique while its blocks are leased
 * @param prompt the prompt as text (one token per UTF-8 byte), or {@code null}
 * @param tokens the prompt as token ids, or {@code null}
 * @param consumerAgent the agent name of the decode worker that will read the blocks: the
 * prefill worker's share of blocks per consumer counts by it; {@code null} for none
 */
public record PrefillRequest(String requestId, @Nullable String prompt, @Nullable List<Integer> tokens,
		@Nullable String consumerAgent) {

	/**
	 * A request that names no consumer.
	 * @param requestId the request, unique while its blocks are leased
	 * @param prompt the prompt as text, or {@code null}
	 * @param tokens the prompt as token ids, or {@code null}
	 */
	public PrefillRequest(String requestId, @Nullable String prompt, @Nullable List<Integer> tokens) {
		this(requestId, prompt, tokens, null);
	}

}
