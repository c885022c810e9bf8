package dev.nixl4j.sample.api;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * {@code POST /generate}: a prompt, as text or as token ids (one of the two).
 *
 * @param requestId the request id, or {@code null} to have an unpredictable one made;
 * accepted only from a caller that presents the workers' bearer token
 * @param prompt the prompt as text (one token per UTF-8 byte), or {@code null}
 * @param tokens the prompt as token ids, or {@code null}
 * @param maxTokens how many tokens to generate, or {@code null} for the worker's default
 * @param decodeDelayMillis a simulated wait in the decode worker's queue between the
 * prefill and the pull, or {@code null} for none (shows what an expired lease does);
 * accepted only from a caller that presents the workers' bearer token
 */
public record GenerateRequest(@Nullable String requestId, @Nullable String prompt, @Nullable List<Integer> tokens,
		@Nullable Integer maxTokens, @Nullable Long decodeDelayMillis) {
}
