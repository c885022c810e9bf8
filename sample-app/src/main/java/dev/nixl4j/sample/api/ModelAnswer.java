package dev.nixl4j.sample.api;

import java.util.List;

/**
 * What the language model generated for a request, and where its time to the first token
 * went.
 *
 * @param name the model (its file's name)
 * @param tokenIds the generated token ids, the prefill worker's first token first; an
 * end-of-turn token, when one was generated, is the last
 * @param stoppedAtEos whether generation stopped at the model's end-of-turn token rather
 * than at {@code maxTokens}
 * @param prefillComputeMillis the prefill worker's computation of the prompt (every
 * layer, K and V written into the leased blocks) and of the first token's logits
 * @param transferMillis the pull of the blocks into the decode worker's cache
 * @param firstDecodeStepMillis the decode worker's first step: the first token through
 * the model over the pulled blocks
 * @param timeToFirstTokenMillis the {@code POST /prefill} call (the prefill computation
 * included), the pull and the first decode step
 * @param decodeTokensPerSecond tokens the decode worker generated per second of its
 * decode steps; 0 when it generated none
 */
public record ModelAnswer(String name, List<Integer> tokenIds, boolean stoppedAtEos, double prefillComputeMillis,
		double transferMillis, double firstDecodeStepMillis, double timeToFirstTokenMillis,
		double decodeTokensPerSecond) {

	/**
	 * Keeps a copy of the token ids.
	 * @param name the model
	 * @param tokenIds the generated token ids
	 * @param stoppedAtEos whether generation stopped at the end-of-turn token
	 * @param prefillComputeMillis the prefill computation
	 * @param transferMillis the pull
	 * @param firstDecodeStepMillis the first decode step
	 * @param timeToFirstTokenMillis the time to the first decode step's end
	 * @param decodeTokensPerSecond the decode speed
	 */
	public ModelAnswer {
		tokenIds = List.copyOf(tokenIds);
	}

}
