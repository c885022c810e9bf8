package dev.nixl4j.sample.api;

import java.util.Locale;

import dev.nixl4j.autoconfigure.endpoint.NixlEndpoint;
import org.jspecify.annotations.Nullable;

/**
 * The answer of {@code POST /generate}.
 *
 * @param requestId the request
 * @param producerAgent the prefill worker's agent; {@value NixlEndpoint#HIDDEN} for a
 * caller without a worker's token
 * @param decodeAgent the decode worker's agent; {@value NixlEndpoint#HIDDEN} for a caller
 * without a worker's token
 * @param engine the decode worker's engine, described ({@code native: NIXL 1.5.1 (path,
 * from source)}); only its kind ({@code native}, {@code embedded}) for a caller without a
 * worker's token
 * @param layout the layout the blocks were checked against
 * @param promptTokens the prompt's length in tokens
 * @param blocks the blocks pulled
 * @param bytes the bytes pulled
 * @param kvCrc32c CRC32C of the pulled bytes, region by region, blocks in token order
 * @param verified whether every byte of every block was what the prompt's tokens and
 * positions give (always {@code true} in an answer: a failed check is an error)
 * @param text the generated text
 * @param timings where the time went
 * @param model what the language model generated and its timings; {@code null} with the
 * toy model
 */
public record GenerateResponse(String requestId, String producerAgent, String decodeAgent, String engine,
		LayoutDocument layout, int promptTokens, int blocks, long bytes, long kvCrc32c, boolean verified, String text,
		Timings timings, @Nullable ModelAnswer model) {

	/**
	 * The answer of the toy model.
	 * @param requestId the request
	 * @param producerAgent the prefill worker's agent
	 * @param decodeAgent the decode worker's agent
	 * @param engine the decode worker's engine
	 * @param layout the layout the blocks were checked against
	 * @param promptTokens the prompt's length in tokens
	 * @param blocks the blocks pulled
	 * @param bytes the bytes pulled
	 * @param kvCrc32c CRC32C of the pulled bytes
	 * @param verified whether every byte was checked
	 * @param text the generated text
	 * @param timings where the time went
	 */
	public GenerateResponse(String requestId, String producerAgent, String decodeAgent, String engine,
			LayoutDocument layout, int promptTokens, int blocks, long bytes, long kvCrc32c, boolean verified,
			String text, Timings timings) {
		this(requestId, producerAgent, decodeAgent, engine, layout, promptTokens, blocks, bytes, kvCrc32c, verified,
				text, timings, null);
	}

	/**
	 * The answer as a caller without a worker's token gets it: no agent names, and of the
	 * engine only its kind, as the NIXL library's path is part of its description.
	 * @return the answer without names
	 */
	public GenerateResponse withoutNames() {
		int colon = this.engine.indexOf(':');
		String kind = ((colon >= 0) ? this.engine.substring(0, colon) : this.engine).strip().toLowerCase(Locale.ROOT);
		return new GenerateResponse(this.requestId, NixlEndpoint.HIDDEN, NixlEndpoint.HIDDEN, kind, this.layout,
				this.promptTokens, this.blocks, this.bytes, this.kvCrc32c, this.verified, this.text, this.timings,
				this.model);
	}

	/**
	 * Where a request's time went, in milliseconds.
	 *
	 * @param prefillCall the {@code POST /prefill} call, the prefill worker's fill
	 * included
	 * @param prefillFill the prefill worker's fill of the blocks
	 * @param transfer the pull: the producer's cache handle and NIXL metadata when the
	 * consumer's session needs them, READ of every block and the producer's lease
	 * confirmation
	 * @param verification the byte-for-byte check of every block
	 * @param total the whole request in the decode worker
	 */
	public record Timings(double prefillCall, double prefillFill, double transfer, double verification, double total) {
	}

}
