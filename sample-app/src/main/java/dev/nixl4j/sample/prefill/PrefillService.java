package dev.nixl4j.sample.prefill;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.zip.CRC32C;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.LeaseOutcome;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.sample.RequestIds;
import dev.nixl4j.sample.SampleApplication;
import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.SampleProperties;
import dev.nixl4j.sample.ToyModel;
import dev.nixl4j.sample.api.PrefillRequest;
import dev.nixl4j.sample.api.PrefillResponse;
import dev.nixl4j.sample.api.Sampling;
import dev.nixl4j.sample.llm.Generation;
import dev.nixl4j.sample.llm.LanguageModel;
import dev.nixl4j.sample.llm.PagedKvPages;
import org.jspecify.annotations.Nullable;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;

/**
 * The prefill worker's work: fills a request's blocks in the starter's paged KV cache
 * from its tokens and positions, and leases them to the decode worker until it confirms
 * its read.
 *
 * <p>
 * Meters: {@code sample.leases} (counter, tag {@code outcome}: {@code COMPLETED},
 * {@code EXPIRED}, {@code CLOSED}) and {@code sample.kv.blocks.free} (gauge).
 */
@Service
@Profile(SampleApplication.PREFILL)
public class PrefillService {

	private final PagedKvCache cache;

	private final KvProducer producer;

	private final ToyModel model;

	private final @Nullable LanguageModel languageModel;

	private final int maxPromptTokens;

	private final BlockShares shares;

	private final Duration retryAfter;

	private final Map<LeaseOutcome, Counter> leases = new EnumMap<>(LeaseOutcome.class);

	PrefillService(PagedKvCache cache, KvProducer producer, ToyModel model, ObjectProvider<LanguageModel> languageModel,
			SampleProperties properties, MeterRegistry meters) {
		this.cache = cache;
		this.producer = producer;
		this.model = model;
		this.languageModel = languageModel.getIfAvailable();
		this.maxPromptTokens = properties.getMaxPromptTokens();
		this.retryAfter = properties.getRetryAfter();
		this.shares = new BlockShares(cache.allocator().capacity(), properties.getPrefill(),
				properties.getRetryAfter());
		for (LeaseOutcome outcome : LeaseOutcome.values()) {
			this.leases.put(outcome,
					Counter.builder("sample.leases")
						.description("Leases of prefilled blocks, by how they ended")
						.tag("outcome", outcome.name())
						.register(meters));
		}
		Gauge.builder("sample.kv.blocks.free", cache, (c) -> c.allocator().freeCount())
			.description("Free blocks of the prefill worker's KV cache")
			.register(meters);
	}

	/**
	 * Fills and leases a request's blocks, within the request's and its consumer's shares
	 * of the cache ({@link BlockShares}).
	 * @param request the request
	 * @return the transfer parameters
	 * @throws SampleException 400 for a bad prompt, id or consumer, 409 for a request
	 * that holds a lease, 429 for a request over its share or its consumer's, 503 when
	 * the cache has too few free blocks
	 */
	public PrefillResponse prefill(PrefillRequest request) {
		String requestId = RequestIds.require(request.requestId());
		Sampling sampling = request.sampling().validate();
		int[] tokens = (this.languageModel != null)
				? this.languageModel.promptTokens(request.prompt(), request.tokens(), this.maxPromptTokens)
				: ToyModel.tokens(request.prompt(), request.tokens(), this.maxPromptTokens);
		int count = this.model.blocksFor(tokens.length);
		BlockShares.Share share = this.shares.take(request.consumerAgent(), requestId, count);
		boolean leased = false;
		try {
			PrefillResponse response = fillAndLease(requestId, request.consumerAgent(), tokens, count, share, sampling);
			// the lease gives the share back when it ends
			leased = true;
			return response;
		}
		finally {
			if (!leased) {
				share.close();
			}
		}
	}

	private PrefillResponse fillAndLease(String requestId, @Nullable String consumer, int[] tokens, int count,
			BlockShares.Share share, Sampling sampling) {
		int[] blocks;
		try {
			blocks = this.cache.allocator().allocate(count);
		}
		catch (NixlException ex) {
			throw new SampleException(HttpStatus.SERVICE_UNAVAILABLE, "KV cache full", "the prefill worker's KV cache "
					+ "cannot hold request '" + requestId + "' now: " + ex.getMessage() + "; retry when leases end", ex,
					this.retryAfter);
		}
		KvLease lease;
		long crc;
		double fillMillis;
		Integer firstToken = null;
		try {
			long start = System.nanoTime();
			if (this.languageModel != null) {
				// the prompt's K and V go straight into the blocks that NIXL reads
				firstToken = Generation.prefill(this.languageModel.model(), tokens,
						new PagedKvPages(this.cache, blocks), sampling);
				fillMillis = (System.nanoTime() - start) / 1e6;
				crc = PagedKvPages.crc32c(this.cache, blocks);
			}
			else {
				crc = fill(tokens, blocks);
				fillMillis = (System.nanoTime() - start) / 1e6;
			}
			// the lease takes over the blocks: they go back to the pool when it ends
			lease = lease(requestId, consumer, blocks);
		}
		catch (RuntimeException | Error ex) {
			this.cache.allocator().release(blocks);
			throw ex;
		}
		// the share ends with the lease, after its blocks were released
		lease.outcome().whenComplete((outcome, failure) -> share.close());
		// the constructor registered a counter for every outcome
		lease.outcome().thenAccept((outcome) -> Objects.requireNonNull(this.leases.get(outcome)).increment());
		return PrefillResponse.of(lease.params(), lease.ttl().toMillis(), tokens.length, crc, fillMillis, firstToken);
	}

	private long fill(int[] tokens, int[] blocks) {
		KvCacheLayout layout = this.cache.layout();
		CRC32C crc = new CRC32C();
		for (int region = 0; region < layout.regionCount(); region++) {
			for (int b = 0; b < blocks.length; b++) {
				var block = this.cache.block(region, blocks[b]);
				this.model.fill(block, region, tokens, b);
				crc.update(block.asByteBuffer());
			}
		}
		return crc.getValue();
	}

	/**
	 * Leases the blocks for the consumer named in the request, so that they come back as
	 * soon as that consumer's entry leaves the registry (the starter's producer watches
	 * it).
	 */
	private KvLease lease(String requestId, @Nullable String consumer, int[] blocks) {
		try {
			return this.producer.lease(requestId, blocks,
					(consumer != null) ? KvLease.options().consumer(consumer) : KvLease.options());
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.ERROR_INVALID_PARAM) {
				throw new SampleException(HttpStatus.CONFLICT, "Request not leasable",
						Objects.requireNonNullElse(ex.getMessage(), ex.toString()), ex);
			}
			throw ex;
		}
	}

}
