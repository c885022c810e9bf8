package dev.nixl4j.sample.api;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * {@code POST /generate}: a prompt, as text or as token ids (one of the two).
 *
 * <p>
 * With the language model ({@code sample.model.path}), a text prompt is the user's
 * message: the model's chat template turns it into tokens (with its default system
 * prompt); token ids go to the model as they are. With the toy model each UTF-8 byte of a
 * text prompt is one token.
 *
 * @param requestId the request id, or {@code null} to have an unpredictable one made;
 * accepted only from a caller that presents the workers' bearer token
 * @param prompt the prompt as text, or {@code null}
 * @param tokens the prompt as token ids, or {@code null}
 * @param maxTokens how many tokens to generate, or {@code null} for the worker's default
 * @param decodeDelayMillis a simulated wait in the decode worker's queue between the
 * prefill and the pull, or {@code null} for none (shows what an expired lease does);
 * accepted only from a caller that presents the workers' bearer token
 * @param temperature the language model's sampling temperature, or {@code null} (or 0)
 * for greedy decoding
 * @param topP the nucleus of top-p sampling, in (0, 1], or {@code null} for 1
 * @param seed the seed of sampling, or {@code null} for 0: the same seed gives the same
 * tokens
 */
public record GenerateRequest(@Nullable String requestId, @Nullable String prompt, @Nullable List<Integer> tokens,
		@Nullable Integer maxTokens, @Nullable Long decodeDelayMillis, @Nullable Float temperature,
		@Nullable Float topP, @Nullable Long seed) {

	/**
	 * A request decoded greedily.
	 * @param requestId the request id, or {@code null}
	 * @param prompt the prompt as text, or {@code null}
	 * @param tokens the prompt as token ids, or {@code null}
	 * @param maxTokens how many tokens to generate, or {@code null}
	 * @param decodeDelayMillis a simulated wait, or {@code null}
	 */
	public GenerateRequest(@Nullable String requestId, @Nullable String prompt, @Nullable List<Integer> tokens,
			@Nullable Integer maxTokens, @Nullable Long decodeDelayMillis) {
		this(requestId, prompt, tokens, maxTokens, decodeDelayMillis, null, null, null);
	}

	/**
	 * Returns how this request samples.
	 * @return its sampling settings
	 */
	public Sampling sampling() {
		return new Sampling(this.temperature, this.topP, this.seed);
	}

}
