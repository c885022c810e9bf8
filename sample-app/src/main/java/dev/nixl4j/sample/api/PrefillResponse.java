package dev.nixl4j.sample.api;

import java.util.List;
import java.util.Objects;

import dev.nixl4j.kv.KvTransferParams;
import org.jspecify.annotations.Nullable;

/**
 * The answer of {@code POST /prefill}: the transfer parameters of the leased blocks
 * (vLLM's {@code kv_transfer_params}) and what the prefill worker computed.
 *
 * @param producerAgent the prefill worker's agent
 * @param requestId the request
 * @param blockIds the leased blocks, in token order
 * @param layoutFingerprint the fingerprint of the prefill worker's layout
 * @param leaseId the lease that holds the blocks
 * @param leaseTtlMillis how long the lease holds them
 * @param promptTokens the prompt's length in tokens
 * @param kvCrc32c CRC32C of the blocks' bytes, region by region, blocks in token order
 * @param fillMillis how long filling the blocks took
 * @param producerIncarnation the incarnation of the prefill worker's cache that took the
 * lease
 * @param generation the lease's generation digest ({@code nixl.kv.integrity})
 * @param checksums the CRC32C of each leased block, when {@code nixl.kv.integrity} is
 * {@code crc32c}
 * @param traceparent the W3C {@code traceparent} of the lease, when the prefill worker
 * traces, which the decode worker's pull continues; {@code null} or empty for none
 * @param tracestate the W3C {@code tracestate} that goes with it, or {@code null}
 */
public record PrefillResponse(String producerAgent, String requestId, List<Integer> blockIds, String layoutFingerprint,
		long leaseId, long leaseTtlMillis, int promptTokens, long kvCrc32c, double fillMillis,
		String producerIncarnation, long generation, List<Integer> checksums, @Nullable String traceparent,
		@Nullable String tracestate) {

	/**
	 * Describes a lease and what the prefill worker computed.
	 * @param params the lease's transfer parameters
	 * @param leaseTtlMillis how long the lease holds the blocks
	 * @param promptTokens the prompt's length in tokens
	 * @param kvCrc32c CRC32C of the blocks' bytes
	 * @param fillMillis how long filling the blocks took
	 * @return the answer
	 */
	public static PrefillResponse of(KvTransferParams params, long leaseTtlMillis, int promptTokens, long kvCrc32c,
			double fillMillis) {
		return new PrefillResponse(params.producerAgent(), params.requestId(), params.blockIds(),
				params.layoutFingerprint(), params.leaseId(), leaseTtlMillis, promptTokens, kvCrc32c, fillMillis,
				params.producerIncarnation(), params.generation(), params.checksums(), params.traceparent(),
				params.tracestate());
	}

	/**
	 * Returns the transfer parameters for {@link dev.nixl4j.kv.KvConsumer#pull}.
	 * @return the parameters, for one consumer rank, with the lease's trace context when
	 * it is well formed
	 */
	public KvTransferParams transferParams() {
		return new KvTransferParams(this.producerAgent, this.requestId, this.blockIds, this.layoutFingerprint,
				this.leaseId, 1, this.generation, this.checksums, this.producerIncarnation,
				Objects.requireNonNullElse(this.traceparent, ""), Objects.requireNonNullElse(this.tracestate, ""));
	}

}
