package dev.nixl4j.kv;

import java.util.List;
import java.util.Objects;

/**
 * What a producer needs to push one request's blocks into a consumer's cache: the
 * consumer's agent, the request, the consumer's block ids (allocated by the consumer, in
 * token order) and the fingerprint of the consumer's layout. The producer also needs the
 * consumer's {@link RemoteCacheHandle}.
 *
 * @param consumerAgent the consumer's agent
 * @param requestId the request
 * @param blockIds the consumer's blocks, in order
 * @param layoutFingerprint {@link KvCacheLayout#fingerprint()} of the consumer's layout
 */
public record KvPushParams(String consumerAgent, String requestId, List<Integer> blockIds, String layoutFingerprint) {

	/**
	 * Checks the parameters.
	 * @param consumerAgent consumer
	 * @param requestId request
	 * @param blockIds blocks
	 * @param layoutFingerprint fingerprint
	 */
	public KvPushParams {
		Objects.requireNonNull(consumerAgent, "consumerAgent");
		Objects.requireNonNull(layoutFingerprint, "layoutFingerprint");
		KvMessages.requireRequestId(requestId);
		blockIds = List.copyOf(blockIds);
		if (blockIds.isEmpty()) {
			throw new IllegalArgumentException("a transfer needs at least one block");
		}
	}

	/**
	 * Returns the block ids as an array.
	 * @return the ids
	 */
	public int[] blockIdArray() {
		return this.blockIds.stream().mapToInt(Integer::intValue).toArray();
	}

}
