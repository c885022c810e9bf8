package dev.nixl4j.sample.api;

/**
 * The answer of {@code POST /generate}.
 *
 * @param requestId the request
 * @param producerAgent the prefill worker's agent
 * @param decodeAgent the decode worker's agent
 * @param engine the decode worker's engine, described
 * @param layout the layout the blocks were checked against
 * @param promptTokens the prompt's length in tokens
 * @param blocks the blocks pulled
 * @param bytes the bytes pulled
 * @param kvCrc32c CRC32C of the pulled bytes, region by region, blocks in token order
 * @param verified whether every byte of every block was what the prompt's tokens and
 * positions give (always {@code true} in an answer: a failed check is an error)
 * @param text the generated text
 * @param timings where the time went
 */
public record GenerateResponse(String requestId, String producerAgent, String decodeAgent, String engine,
		LayoutDocument layout, int promptTokens, int blocks, long bytes, long kvCrc32c, boolean verified, String text,
		Timings timings) {

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
