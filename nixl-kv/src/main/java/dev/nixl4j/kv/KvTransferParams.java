package dev.nixl4j.kv;

import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * What a consumer needs to pull one request's blocks from a producer, as
 * {@link KvProducer#lease} returns it (vLLM's {@code kv_transfer_params}): the producer
 * agent, the request, the producer's block ids in token order, the fingerprint of the
 * producer's layout, the lease that holds the blocks and the number of consumer ranks
 * that will each read a slice of heads (1 when the tensor parallelism is the same on both
 * sides).
 *
 * <p>
 * Plain data: a {@link KvConsumer} with a {@link KvDirectory} needs nothing else (it
 * finds the producer's {@link RemoteCacheHandle} by name and checks its incarnation); one
 * without learns the handle through {@link KvConsumer#connect}.
 *
 * @param producerAgent the producer's agent
 * @param requestId the request
 * @param blockIds the producer's blocks, in order
 * @param layoutFingerprint {@link KvCacheLayout#fingerprint()} of the producer's layout
 * @param leaseId the lease that holds the blocks
 * @param consumerRanks how many consumer ranks read the blocks
 * @param generation the {@link BlockAllocator#generationDigest digest of the generations}
 * of the blocks when the lease was taken, which the consumer's notification carries back
 * and the producer compares with its blocks' current generations; 0 when none is given
 * ({@link KvIntegrity#NONE}, or parameters made with the shorter constructor)
 * @param checksums the CRC32C of every block over all regions
 * ({@link KvIntegrity#CRC32C}): entry {@code s * n + i} (for {@code n} blocks) covers
 * slice {@code s} of the heads of block {@code blockIds[i]}, as consumer rank {@code s}
 * reads it; with one consumer rank, entry {@code i} covers the whole block. Empty when
 * the producer computes none.
 * @param producerIncarnation the {@linkplain RemoteCacheHandle#incarnation() incarnation}
 * of the producer's cache that took the lease, or {@code ""} when not known
 * @param traceparent the W3C {@code traceparent} of the producer's work on the request,
 * which the consumer's pull continues, or {@code ""} for none; a value that is not one
 * ({@link KvTraceContext#isTraceparent}) is dropped, with the {@code tracestate}
 * @param tracestate the W3C {@code tracestate} that goes with the {@code traceparent}, or
 * {@code ""} for none; a malformed value ({@link KvTraceContext#isTracestate}) is dropped
 */
public record KvTransferParams(String producerAgent, String requestId, List<Integer> blockIds, String layoutFingerprint,
		long leaseId, int consumerRanks, long generation, List<Integer> checksums, String producerIncarnation,
		String traceparent, String tracestate) {

	/**
	 * Checks the parameters.
	 * @param producerAgent producer
	 * @param requestId request
	 * @param blockIds blocks
	 * @param layoutFingerprint fingerprint
	 * @param leaseId lease
	 * @param consumerRanks consumer ranks
	 * @param generation generation digest, 0 for none
	 * @param checksums CRC32C per block and slice, or empty
	 * @param producerIncarnation the producer cache's incarnation
	 * @param traceparent the W3C {@code traceparent}, {@code ""} (or {@code null}) for
	 * none; dropped when malformed
	 * @param tracestate the W3C {@code tracestate}, {@code ""} (or {@code null}) for
	 * none; dropped when malformed
	 */
	public KvTransferParams {
		Objects.requireNonNull(producerAgent, "producerAgent");
		Objects.requireNonNull(producerIncarnation, "producerIncarnation");
		if (producerIncarnation.length() > RemoteCacheHandle.MAX_LABEL) {
			throw new IllegalArgumentException("producerIncarnation must be at most " + RemoteCacheHandle.MAX_LABEL
					+ " characters, was " + producerIncarnation.length());
		}
		Objects.requireNonNull(layoutFingerprint, "layoutFingerprint");
		KvMessages.requireRequestId(requestId);
		blockIds = List.copyOf(blockIds);
		if (blockIds.isEmpty()) {
			throw new IllegalArgumentException("a transfer needs at least one block");
		}
		if (consumerRanks <= 0) {
			throw new IllegalArgumentException("consumerRanks must be positive, was " + consumerRanks);
		}
		checksums = List.copyOf(checksums);
		if (!checksums.isEmpty() && checksums.size() != (long) blockIds.size() * consumerRanks) {
			throw new IllegalArgumentException("checksums must be empty or one per block and consumer rank ("
					+ ((long) blockIds.size() * consumerRanks) + "), were " + checksums.size());
		}
		// from another process: kept only when well formed, never repeated in an error
		KvTraceContext trace = KvTraceContext.parse(traceparent, tracestate);
		traceparent = (trace != null) ? trace.traceparent() : "";
		tracestate = (trace != null) ? trace.tracestate() : "";
	}

	/**
	 * Creates parameters without a trace context.
	 * @param producerAgent producer
	 * @param requestId request
	 * @param blockIds blocks
	 * @param layoutFingerprint fingerprint
	 * @param leaseId lease
	 * @param consumerRanks consumer ranks
	 * @param generation generation digest, 0 for none
	 * @param checksums CRC32C per block and slice, or empty
	 * @param producerIncarnation the producer cache's incarnation
	 */
	public KvTransferParams(String producerAgent, String requestId, List<Integer> blockIds, String layoutFingerprint,
			long leaseId, int consumerRanks, long generation, List<Integer> checksums, String producerIncarnation) {
		this(producerAgent, requestId, blockIds, layoutFingerprint, leaseId, consumerRanks, generation, checksums,
				producerIncarnation, "", "");
	}

	/**
	 * Creates parameters without integrity data (generation 0, no checksums), whose
	 * producer then checks the lease only, and without the producer's incarnation.
	 * @param producerAgent the producer's agent
	 * @param requestId the request
	 * @param blockIds the producer's blocks, in order
	 * @param layoutFingerprint {@link KvCacheLayout#fingerprint()} of the producer's
	 * layout
	 * @param leaseId the lease that holds the blocks
	 * @param consumerRanks how many consumer ranks read the blocks
	 */
	public KvTransferParams(String producerAgent, String requestId, List<Integer> blockIds, String layoutFingerprint,
			long leaseId, int consumerRanks) {
		this(producerAgent, requestId, blockIds, layoutFingerprint, leaseId, consumerRanks, 0, List.of(), "", "", "");
	}

	/**
	 * Returns the trace context the parameters carry.
	 * @return the context, or {@code null} for none
	 */
	public @Nullable KvTraceContext traceContext() {
		return this.traceparent.isEmpty() ? null : new KvTraceContext(this.traceparent, this.tracestate);
	}

	/**
	 * Returns these parameters with another trace context.
	 * @param context the context, or {@code null} for none
	 * @return the parameters
	 */
	public KvTransferParams withTraceContext(@Nullable KvTraceContext context) {
		return new KvTransferParams(this.producerAgent, this.requestId, this.blockIds, this.layoutFingerprint,
				this.leaseId, this.consumerRanks, this.generation, this.checksums, this.producerIncarnation,
				(context != null) ? context.traceparent() : "", (context != null) ? context.tracestate() : "");
	}

	/**
	 * Checks a request id as the KV helpers take it: 1 to 256 characters, no {@code ':'}
	 * (their notifications use it as a separator) and no control characters.
	 * @param requestId the id
	 * @return the id
	 * @throws IllegalArgumentException naming what is wrong
	 */
	public static String requireRequestId(@Nullable String requestId) {
		KvMessages.requireRequestId(requestId);
		return Objects.requireNonNull(requestId);
	}

	/**
	 * Returns the block ids as an array.
	 * @return the ids
	 */
	public int[] blockIdArray() {
		return this.blockIds.stream().mapToInt(Integer::intValue).toArray();
	}

}
