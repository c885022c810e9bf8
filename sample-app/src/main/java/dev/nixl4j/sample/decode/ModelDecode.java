package dev.nixl4j.sample.decode;

import java.time.Duration;
import java.util.Arrays;
import java.util.stream.IntStream;

import dev.nixl4j.NixlException;
import dev.nixl4j.kv.KvBlocks;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.sample.RequestIds;
import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.SampleProperties;
import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.api.LayoutDocument;
import dev.nixl4j.sample.api.ModelAnswer;
import dev.nixl4j.sample.api.PrefillRequest;
import dev.nixl4j.sample.api.PrefillResponse;
import dev.nixl4j.sample.api.Sampling;
import dev.nixl4j.sample.llm.Generation;
import dev.nixl4j.sample.llm.LanguageModel;
import dev.nixl4j.sample.llm.PagedKvPages;

import org.springframework.http.HttpStatus;

/**
 * The decode worker's work with the language model: the prompt's tokens to the prefill
 * worker, which computes their K and V into leased blocks and picks the first token; the
 * blocks pulled into this worker's cache and checked against the prefill worker's CRC32C;
 * then generation, whose attention reads the pulled blocks where they landed and whose
 * new tokens' K and V go into blocks of this worker's own.
 */
final class ModelDecode {

	private ModelDecode() {
	}

	static GenerateResponse serve(DecodeService service, LanguageModel model, GenerateRequest request, long start) {
		SampleProperties properties = service.properties();
		Sampling sampling = request.sampling().validate();
		int[] tokens = model.promptTokens(request.prompt(), request.tokens(), properties.getMaxPromptTokens());
		String requestId = (request.requestId() != null) ? RequestIds.require(request.requestId())
				: RequestIds.generate();
		int generated = service.generatedLength(request.maxTokens());
		model.requireContext(tokens.length, generated);
		Duration delay = DecodeDelay.of(request.decodeDelayMillis(), properties.getDecode().getMaxDecodeDelay());
		PagedKvCache cache = service.cache();
		KvCacheLayout layout = cache.layout();
		long t0 = System.nanoTime();
		// the ids, not the text: the prefill worker runs exactly the tokens counted here
		PrefillResponse prefilled = service.prefillClient()
			.prefill(new PrefillRequest(requestId, null, IntStream.of(tokens).boxed().toList(), null,
					sampling.temperature(), sampling.topP(), sampling.seed()));
		long prefillNanos = System.nanoTime() - t0;
		int promptBlocks = Generation.pagesFor(tokens.length, layout.blockSize());
		Integer first = prefilled.firstToken();
		if (prefilled.promptTokens() != tokens.length || prefilled.blockIds().size() != promptBlocks || first == null
				|| first < 0 || first >= model.model().config().vocabulary()) {
			throw new SampleException(HttpStatus.BAD_GATEWAY, "Prefill answer does not match the prompt",
					"the prefill worker counted " + prefilled.promptTokens() + " tokens in "
							+ prefilled.blockIds().size() + " blocks with first token " + first
							+ "; this worker counts " + tokens.length + " tokens in " + promptBlocks
							+ " blocks and needs a first token of the model's vocabulary");
		}
		DecodeDelay.sleep(delay);
		Duration timeout = properties.getDecode().getTransferTimeout();
		long t1 = System.nanoTime();
		try (KvBlocks blocks = service.pull(prefilled, timeout)) {
			long transferNanos = System.nanoTime() - t1;
			long t2 = System.nanoTime();
			long crc = verify(cache, blocks.blockIds(), requestId, prefilled.kvCrc32c());
			long verifyNanos = System.nanoTime() - t2;
			int pages = Generation.pagesFor(Math.max(tokens.length, Generation.positions(tokens.length, generated)),
					layout.blockSize());
			int[] own = allocate(cache, pages - blocks.size(), requestId, properties.getRetryAfter());
			try {
				int[] all = IntStream.concat(Arrays.stream(blocks.blockIds()), Arrays.stream(own)).toArray();
				Generation.Decoded decoded = Generation.decode(model.model(), new PagedKvPages(cache, all),
						tokens.length, first, generated, sampling, model.eos());
				double firstStep = DecodeService.millis(decoded.firstStepNanos());
				double ttft = DecodeService.millis(prefillNanos + transferNanos + verifyNanos)
						+ ((generated > 1) ? firstStep : 0);
				ModelAnswer answer = new ModelAnswer(model.name(), decoded.ids(), decoded.stoppedAtEos(),
						prefilled.fillMillis(), DecodeService.millis(transferNanos), firstStep, ttft,
						decoded.tokensPerSecond());
				GenerateResponse.Timings timings = new GenerateResponse.Timings(DecodeService.millis(prefillNanos),
						prefilled.fillMillis(), DecodeService.millis(transferNanos), DecodeService.millis(verifyNanos),
						DecodeService.millis(System.nanoTime() - start));
				return new GenerateResponse(requestId, prefilled.producerAgent(), service.agent().name(),
						service.engine(), LayoutDocument.of(layout), tokens.length, blocks.size(), blocks.bytes(), crc,
						true, model.text(decoded.ids()), timings, answer);
			}
			finally {
				if (own.length > 0) {
					cache.allocator().release(own);
				}
			}
		}
	}

	/**
	 * CRC32C of the pulled blocks, region by region, blocks in token order, against the
	 * prefill worker's.
	 * @throws SampleException 502 when they differ
	 */
	static long verify(PagedKvCache cache, int[] blocks, String requestId, long expected) {
		long crc = PagedKvPages.crc32c(cache, blocks);
		if (crc != expected) {
			throw new SampleException(HttpStatus.BAD_GATEWAY, "KV blocks corrupted", "request '" + requestId
					+ "': CRC32C of the pulled KV blocks differs from the prefill worker's: the model's cache did not "
					+ "arrive intact");
		}
		return crc;
	}

	private static int[] allocate(PagedKvCache cache, int count, String requestId, Duration retryAfter) {
		if (count <= 0) {
			return new int[0];
		}
		try {
			return cache.allocator().allocate(count);
		}
		catch (NixlException ex) {
			throw new SampleException(HttpStatus.SERVICE_UNAVAILABLE, "KV cache full",
					"the decode worker's KV cache cannot hold the " + count + " blocks that request '" + requestId
							+ "' generates into now: " + ex.getMessage() + "; retry when requests end",
					ex, retryAfter);
		}
	}

}
