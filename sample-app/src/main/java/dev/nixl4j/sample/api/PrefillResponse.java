package dev.nixl4j.sample.api;

import java.util.List;

import dev.nixl4j.kv.KvTransferParams;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The answer of {@code POST /prefill}: the transfer parameters of the leased blocks
 * (vLLM's {@code kv_transfer_params}) in their wire form
 * ({@link KvTransferParams#toJson()}, as a JSON object) and what the prefill worker
 * computed.
 *
 * @param kvTransferParams the lease's transfer parameters, as
 * {@link KvTransferParams#toJson()} writes them
 * @param leaseTtlMillis how long the lease holds the blocks
 * @param promptTokens the prompt's length in tokens
 * @param kvCrc32c CRC32C of the blocks' bytes, region by region, blocks in token order
 * @param fillMillis how long filling the blocks took: with the language model, its
 * prefill computation (the prompt through every layer, K and V into the blocks)
 * @param firstToken the language model's first generated token, picked from the prompt's
 * last logits; {@code null} with the toy model
 */
public record PrefillResponse(JsonNode kvTransferParams, long leaseTtlMillis, int promptTokens, long kvCrc32c,
		double fillMillis, @Nullable Integer firstToken) {

	private static final JsonMapper JSON = JsonMapper.builder().build();

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
		return of(params, leaseTtlMillis, promptTokens, kvCrc32c, fillMillis, null);
	}

	/**
	 * Describes a lease, what the prefill worker computed and the first token.
	 * @param params the lease's transfer parameters
	 * @param leaseTtlMillis how long the lease holds the blocks
	 * @param promptTokens the prompt's length in tokens
	 * @param kvCrc32c CRC32C of the blocks' bytes
	 * @param fillMillis how long filling the blocks took
	 * @param firstToken the first generated token, or {@code null}
	 * @return the answer
	 */
	public static PrefillResponse of(KvTransferParams params, long leaseTtlMillis, int promptTokens, long kvCrc32c,
			double fillMillis, @Nullable Integer firstToken) {
		return new PrefillResponse(JSON.readTree(params.toJson()), leaseTtlMillis, promptTokens, kvCrc32c, fillMillis,
				firstToken);
	}

	/**
	 * Returns the transfer parameters for {@link dev.nixl4j.kv.KvConsumer#pull}, read
	 * from their wire form ({@link KvTransferParams#fromJson}).
	 * @return the parameters
	 * @throws IllegalArgumentException naming what is wrong with them
	 */
	public KvTransferParams transferParams() {
		return KvTransferParams.fromJson(JSON.writeValueAsString(this.kvTransferParams));
	}

	/**
	 * Returns the prefill worker's agent.
	 * @return the agent
	 */
	public String producerAgent() {
		return transferParams().producerAgent();
	}

	/**
	 * Returns the request.
	 * @return the request id
	 */
	public String requestId() {
		return transferParams().requestId();
	}

	/**
	 * Returns the leased blocks, in token order.
	 * @return the block ids
	 */
	public List<Integer> blockIds() {
		return transferParams().blockIds();
	}

}
