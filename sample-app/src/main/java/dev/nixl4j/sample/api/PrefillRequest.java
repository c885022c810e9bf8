package dev.nixl4j.sample.api;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * {@code POST /prefill}: a request id and its prompt, as text or as token ids (one of the
 * two).
 *
 * @param requestId the request, unique while its blocks are leased
 * @param prompt the prompt as text (one token per UTF-8 byte), or {@code null}
 * @param tokens the prompt as token ids, or {@code null}
 */
public record PrefillRequest(String requestId, @Nullable String prompt, @Nullable List<Integer> tokens) {
}
