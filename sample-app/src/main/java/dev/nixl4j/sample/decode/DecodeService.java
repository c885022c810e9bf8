package dev.nixl4j.sample.decode;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.kv.KvBlocks;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.sample.RequestIds;
import dev.nixl4j.sample.SampleApplication;
import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.SampleProperties;
import dev.nixl4j.sample.ToyModel;
import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.api.LayoutDocument;
import dev.nixl4j.sample.api.PrefillRequest;
import dev.nixl4j.sample.api.PrefillResponse;
import dev.nixl4j.sample.llm.Generation;
import dev.nixl4j.sample.llm.LanguageModel;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;

/**
 * The decode worker's work: per request it asks the prefill worker to fill and lease the
 * prompt's blocks, pulls them into the starter's paged KV cache with the starter's
 * {@link KvConsumer}, checks every byte against the prompt, and "generates" text from
 * them.
 *
 * <p>
 * The consumer owns the session with the prefill worker: it finds the worker's cache by
 * the agent named in the lease, checks its layout and model, follows its restarts,
 * reconnects after a dropped link and checks the lease's integrity. This class only maps
 * its typed failures to answers ({@link PullFailures}). Meter: {@code sample.generate}
 * (timer, tag {@code status}).
 */
@Service
@Profile(SampleApplication.DECODE)
public class DecodeService {

	private static final int MAX_GENERATED = 4096;

	private final NixlAgent agent;

	private final PagedKvCache cache;

	private final KvConsumer consumer;

	private final ToyModel model;

	private final @Nullable LanguageModel languageModel;

	private final PrefillClient prefill;

	private final SampleProperties properties;

	private final MeterRegistry meters;

	DecodeService(NixlAgent agent, PagedKvCache cache, KvConsumer consumer, ToyModel model,
			ObjectProvider<LanguageModel> languageModel, PrefillClient prefill, SampleProperties properties,
			MeterRegistry meters) {
		this.agent = agent;
		this.cache = cache;
		this.consumer = consumer;
		this.model = model;
		this.languageModel = languageModel.getIfAvailable();
		this.prefill = prefill;
		this.properties = properties;
		this.meters = meters;
	}

	/**
	 * Serves one request.
	 * @param request the request
	 * @return the answer, with the request's timings
	 * @throws SampleException with the status to answer: 400 bad input, 409 a cache that
	 * differs from the prefill worker's, 410 a lease that did not hold, 502 a failed pull
	 * or check, 503 the prefill worker unavailable, too many transfers in flight or a
	 * cache full (the library gave the lease back)
	 */
	public GenerateResponse generate(GenerateRequest request) {
		long start = System.nanoTime();
		String status = "500";
		try {
			GenerateResponse response = serve(request, start);
			status = "200";
			return response;
		}
		catch (SampleException ex) {
			status = Integer.toString(ex.status().value());
			throw ex;
		}
		finally {
			Timer.builder("sample.generate")
				.description("Decode requests, by answer status")
				.tag("status", status)
				.register(this.meters)
				.record(Duration.ofNanos(System.nanoTime() - start));
		}
	}

	NixlAgent agent() {
		return this.agent;
	}

	PagedKvCache cache() {
		return this.cache;
	}

	PrefillClient prefillClient() {
		return this.prefill;
	}

	SampleProperties properties() {
		return this.properties;
	}

	/**
	 * Counts the KV blocks a request's prompt needs, before anything is asked of the
	 * prefill worker.
	 * @param request the request
	 * @return its blocks
	 * @throws SampleException 400 for a bad prompt
	 */
	public int blocksFor(GenerateRequest request) {
		if (this.languageModel != null) {
			int prompt = this.languageModel.promptTokens(request.prompt(), request.tokens(),
					this.properties.getMaxPromptTokens()).length;
			return Generation.pagesFor(
					Math.max(prompt, Generation.positions(prompt, Math.max(0, generatedLength(request.maxTokens())))),
					this.cache.layout().blockSize());
		}
		return this.model.blocksFor(
				ToyModel.tokens(request.prompt(), request.tokens(), this.properties.getMaxPromptTokens()).length);
	}

	private GenerateResponse serve(GenerateRequest request, long start) {
		if (this.languageModel != null) {
			return ModelDecode.serve(this, this.languageModel, request, start);
		}
		int[] tokens = ToyModel.tokens(request.prompt(), request.tokens(), this.properties.getMaxPromptTokens());
		String requestId = (request.requestId() != null) ? RequestIds.require(request.requestId())
				: RequestIds.generate();
		int generated = generatedLength(request.maxTokens());
		Duration delay = DecodeDelay.of(request.decodeDelayMillis(), this.properties.getDecode().getMaxDecodeDelay());
		long t0 = System.nanoTime();
		PrefillResponse prefilled = this.prefill
			.prefill(new PrefillRequest(requestId, request.prompt(), request.tokens()));
		long prefillNanos = System.nanoTime() - t0;
		if (prefilled.promptTokens() != tokens.length
				|| prefilled.blockIds().size() != this.model.blocksFor(tokens.length)) {
			throw new SampleException(HttpStatus.BAD_GATEWAY, "Prefill answer does not match the prompt",
					"the prefill worker counted " + prefilled.promptTokens() + " tokens in "
							+ prefilled.blockIds().size() + " blocks; this worker counts " + tokens.length
							+ " tokens in " + this.model.blocksFor(tokens.length) + " blocks");
		}
		DecodeDelay.sleep(delay);
		Duration timeout = this.properties.getDecode().getTransferTimeout();
		long t1 = System.nanoTime();
		try (KvBlocks blocks = pull(prefilled, timeout)) {
			long transferNanos = System.nanoTime() - t1;
			long t2 = System.nanoTime();
			long crc = PulledBlocks.verify(this.model, this.cache, blocks.blockIds(), tokens, requestId,
					prefilled.kvCrc32c());
			long verifyNanos = System.nanoTime() - t2;
			String text = ToyModel.generate(crc, tokens.length, generated);
			GenerateResponse.Timings timings = new GenerateResponse.Timings(millis(prefillNanos),
					prefilled.fillMillis(), millis(transferNanos), millis(verifyNanos),
					millis(System.nanoTime() - start));
			return new GenerateResponse(requestId, prefilled.producerAgent(), this.agent.name(), engine(),
					LayoutDocument.of(this.cache.layout()), tokens.length, blocks.size(), blocks.bytes(), crc, true,
					text, timings);
		}
	}

	/**
	 * Pulls a lease's blocks into blocks of the cache: when the pull fails, the library
	 * has given the lease and the blocks back (holding back those a late READ may still
	 * write), and what is left is the answer.
	 */
	KvBlocks pull(PrefillResponse prefilled, Duration timeout) {
		try {
			return this.consumer.pull(prefilled.transferParams(), timeout);
		}
		catch (RuntimeException ex) {
			throw PullFailures.translate(ex, prefilled, timeout, this.properties.getRetryAfter());
		}
	}

	int generatedLength(@Nullable Integer requested) {
		int length = Objects.requireNonNullElse(requested, this.properties.getDecode().getMaxTokens());
		if (length < 0 || length > MAX_GENERATED) {
			throw SampleException.badRequest("maxTokens must lie in [0, " + MAX_GENERATED + "], was " + length);
		}
		return length;
	}

	/**
	 * The engine, e.g. "native: NIXL 1.5.1 (...)" or "embedded: embedded engine (...)".
	 */
	String engine() {
		return this.agent.engine().name().toLowerCase(Locale.ROOT) + ": " + this.agent.engineDescription();
	}

	static double millis(long nanos) {
		return nanos / 1e6;
	}

}
