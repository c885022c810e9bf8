package dev.nixl4j.sample.api;

import java.util.List;

import dev.nixl4j.kv.KvTransferParams;

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
 */
public record PrefillResponse(String producerAgent, String requestId, List<Integer> blockIds, String layoutFingerprint,
		long leaseId, long leaseTtlMillis, int promptTokens, long kvCrc32c, double fillMillis) {

	/**
	 * Returns the transfer parameters for {@link dev.nixl4j.kv.KvConsumer#pull}.
	 * @return the parameters, for one consumer rank
	 */
	public KvTransferParams transferParams() {
		return new KvTransferParams(this.producerAgent, this.requestId, this.blockIds, this.layoutFingerprint,
				this.leaseId, 1);
	}

}
