package dev.nixl4j.sample.decode;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.zip.CRC32C;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.autoconfigure.NixlLifecycle;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvLeaseLostException;
import dev.nixl4j.kv.LeaseConfirmation;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.RemoteCacheHandle;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.sample.RequestIds;
import dev.nixl4j.sample.SampleApplication;
import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.SampleProperties;
import dev.nixl4j.sample.ToyModel;
import dev.nixl4j.sample.api.CacheHandleDocument;
import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.api.LayoutDocument;
import dev.nixl4j.sample.api.PrefillRequest;
import dev.nixl4j.sample.api.PrefillResponse;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;

/**
 * The decode worker's work: per request it asks the prefill worker to fill and lease the
 * prompt's blocks, pulls them into the starter's paged KV cache with the
 * {@link KvConsumer} under that lease, checks every byte against the prompt, and
 * "generates" text from them.
 *
 * <p>
 * The prefill worker's cache handle is fetched, and its layout checked, before the first
 * request is sent to it, and again when the agent named in an answer is new (the prefill
 * worker restarted); this worker publishes its own NIXL metadata then, so that the
 * prefill worker can confirm leases to it. Meter: {@code sample.generate} (timer, tag
 * {@code status}).
 */
@Service
@Profile(SampleApplication.DECODE)
public class DecodeService {

	private static final Log logger = LogFactory.getLog(DecodeService.class);

	private static final int MAX_GENERATED = 4096;

	private final NixlAgent agent;

	private final PagedKvCache cache;

	private final KvConsumer consumer;

	private final ToyModel model;

	private final PrefillClient prefill;

	private final NixlLifecycle lifecycle;

	private final SampleProperties properties;

	private final MeterRegistry meters;

	private final Object producerLock = new Object();

	private volatile @Nullable RemoteCacheHandle producer;

	DecodeService(NixlAgent agent, PagedKvCache cache, KvConsumer consumer, ToyModel model, PrefillClient prefill,
			NixlLifecycle lifecycle, SampleProperties properties, MeterRegistry meters) {
		this.agent = agent;
		this.cache = cache;
		this.consumer = consumer;
		this.model = model;
		this.prefill = prefill;
		this.lifecycle = lifecycle;
		this.properties = properties;
		this.meters = meters;
	}

	/**
	 * Serves one request.
	 * @param request the request
	 * @return the answer, with the request's timings
	 * @throws SampleException with the status to answer: 400 bad input, 409 a layout that
	 * differs from the prefill worker's, 410 a lease that did not hold, 502 a failed pull
	 * or check, 503 the prefill worker unavailable (also when its agent's metadata was
	 * withdrawn, its lease was not confirmed in time or transfers to it are suspended by
	 * its circuit breaker), too many transfers in flight or a cache full (the lease is
	 * given back)
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

	private GenerateResponse serve(GenerateRequest request, long start) {
		int[] tokens = ToyModel.tokens(request.prompt(), request.tokens(), this.properties.getMaxPromptTokens());
		String requestId = (request.requestId() != null) ? RequestIds.require(request.requestId())
				: RequestIds.generate();
		int generated = generatedLength(request.maxTokens());
		Duration delay = delay(request.decodeDelayMillis());

		long metadataNanos = 0;
		RemoteCacheHandle handle = this.producer;
		if (handle == null) {
			long t = System.nanoTime();
			handle = connect(null);
			metadataNanos += System.nanoTime() - t;
		}
		long t0 = System.nanoTime();
		PrefillResponse prefilled = this.prefill
			.prefill(new PrefillRequest(requestId, request.prompt(), request.tokens()));
		long prefillNanos = System.nanoTime() - t0;
		if (!prefilled.producerAgent().equals(handle.agentName())) {
			long t = System.nanoTime();
			handle = connect(prefilled.producerAgent());
			metadataNanos += System.nanoTime() - t;
		}
		KvCacheLayout layout = this.cache.layout();
		if (!prefilled.layoutFingerprint().equals(layout.fingerprint())) {
			throw layoutMismatch(prefilled.layoutFingerprint());
		}
		if (prefilled.promptTokens() != tokens.length
				|| prefilled.blockIds().size() != this.model.blocksFor(tokens.length)) {
			throw new SampleException(HttpStatus.BAD_GATEWAY, "Prefill answer does not match the prompt",
					"the prefill worker counted " + prefilled.promptTokens() + " tokens in "
							+ prefilled.blockIds().size() + " blocks; this worker counts " + tokens.length
							+ " tokens in " + this.model.blocksFor(tokens.length) + " blocks");
		}
		if (!delay.isZero()) {
			sleep(delay);
		}
		int[] local = allocate(prefilled);
		try {
			long t1 = System.nanoTime();
			long bytes = pull(prefilled, local, handle);
			long transferNanos = System.nanoTime() - t1;
			long t2 = System.nanoTime();
			long crc = verify(requestId, tokens, local, prefilled.kvCrc32c());
			long verifyNanos = System.nanoTime() - t2;
			String text = ToyModel.generate(crc, tokens.length, generated);
			GenerateResponse.Timings timings = new GenerateResponse.Timings(millis(prefillNanos),
					prefilled.fillMillis(), millis(metadataNanos), millis(transferNanos), millis(verifyNanos),
					millis(System.nanoTime() - start));
			return new GenerateResponse(requestId, prefilled.producerAgent(), this.agent.name(), engine(),
					LayoutDocument.of(layout), tokens.length, local.length, bytes, crc, true, text, timings);
		}
		finally {
			this.cache.allocator().release(local);
		}
	}

	/**
	 * Learns the prefill worker's cache: fetches its handle, checks its layout, publishes
	 * this worker's metadata and loads the producer's.
	 */
	private RemoteCacheHandle connect(@Nullable String expectedAgent) {
		synchronized (this.producerLock) {
			RemoteCacheHandle current = this.producer;
			if (current != null && (expectedAgent == null || current.agentName().equals(expectedAgent))) {
				return current;
			}
			CacheHandleDocument document = this.prefill.handle();
			if (!document.layout().fingerprint().equals(this.cache.layout().fingerprint())) {
				throw layoutMismatch(document.layout().fingerprint());
			}
			if (expectedAgent != null && !document.agentName().equals(expectedAgent)) {
				throw new PrefillUnavailableException(
						"the prefill worker restarted while this request was served (agent '" + expectedAgent
								+ "' is now '" + document.agentName() + "'); send the request again",
						null);
			}
			RemoteCacheHandle handle;
			try {
				handle = document.toHandle();
			}
			catch (IllegalArgumentException ex) {
				throw new SampleException(HttpStatus.BAD_GATEWAY, "Bad cache handle",
						"the prefill worker's cache handle is not usable: " + ex.getMessage(), ex);
			}
			try {
				// The producer confirms leases with notifications, so it needs this
				// worker's metadata.
				this.lifecycle.publish();
				this.consumer.connect(handle);
			}
			catch (NixlException ex) {
				throw new PrefillUnavailableException(
						"could not exchange NIXL metadata with the prefill worker's agent '" + handle.agentName()
								+ "': " + ex.getMessage(),
						ex);
			}
			if (current != null && this.agent.hasRemoteMetadata(current.agentName())) {
				this.agent.invalidateRemoteMetadata(current.agentName());
			}
			this.producer = handle;
			return handle;
		}
	}

	/**
	 * Pulls the leased blocks. A failed pull has given the lease back already; only a
	 * lease that expired is worth the advice on its time to live.
	 */
	private long pull(PrefillResponse prefilled, int[] local, RemoteCacheHandle handle) {
		Duration timeout = this.properties.getDecode().getTransferTimeout();
		String pulling = "pulling the blocks of request '" + prefilled.requestId() + "' from '"
				+ prefilled.producerAgent() + "'";
		try {
			return this.consumer.pull(prefilled.transferParams(), local, timeout);
		}
		catch (KvLeaseLostException ex) {
			LeaseConfirmation answer = ex.confirmation();
			if (answer == null) {
				throw new PrefillUnavailableException(pulling + " got no confirmation of its lease within " + timeout
						+ " (sample.decode.transfer-timeout): the prefill worker may have stopped; the data was discarded",
						ex);
			}
			String advice = (answer == LeaseConfirmation.RELEASED) ? ""
					: "; lease time " + prefilled.leaseTtlMillis() + " ms (nixl.kv.lease-ttl of the prefill worker)";
			throw new SampleException(HttpStatus.GONE, "Lease lost",
					"the blocks of request '" + prefilled.requestId()
							+ "' were read but the prefill worker did not confirm its lease (" + answer
							+ "): its blocks may have been reused, so the data was discarded" + advice,
					ex);
		}
		catch (CallNotPermittedException ex) {
			// the starter's breaker for this peer opened after failed transfers;
			// nothing was read and the lease was given back
			throw new PrefillUnavailableException(pulling + " was refused: transfers to that agent are suspended after"
					+ " repeated failures (circuit breaker '" + ex.getCausingCircuitBreakerName()
					+ "' is open); they are tried again after its wait", ex);
		}
		catch (BulkheadFullException ex) {
			throw new SampleException(HttpStatus.SERVICE_UNAVAILABLE, "Too many transfers", pulling
					+ " was refused: this worker has as many transfers in flight as it allows (bulkhead 'nixl-transfers')",
					ex);
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.ERROR_NOT_FOUND || ex.status() == NixlStatus.UNAVAILABLE) {
				// its metadata was withdrawn, or it cannot be reached: the prefill worker
				// is gone for now
				throw new PrefillUnavailableException(pulling + " failed: " + ex.getMessage(), ex);
			}
			if (ex.status() == NixlStatus.ERROR_BACKEND) {
				reconnect(handle);
			}
			throw new SampleException(HttpStatus.BAD_GATEWAY, "Transfer failed",
					pulling + " failed: " + ex.getMessage(), ex);
		}
	}

	/**
	 * Makes both workers connect to each other again after a READ failed in the backend.
	 * A connection that UCX lost (its TCP connection was reset, or the kernel gave up on
	 * it while the link was down) stays failed in NIXL on both sides until each side
	 * forgets the other's metadata: this worker forgets the prefill worker's now, and
	 * withdraws and publishes its own, so that the prefill worker, which watches it,
	 * forgets it too and loads it again for its next answer. The next request fetches the
	 * cache handle and loads the prefill worker's metadata again, with descriptor lists
	 * prepared again. Once per handle: the other requests that failed with it find it
	 * replaced.
	 */
	private void reconnect(RemoteCacheHandle failed) {
		synchronized (this.producerLock) {
			if (this.producer != failed) {
				return;
			}
			this.producer = null;
			String name = failed.agentName();
			logger.info("A READ from '" + name + "' failed in the backend: connecting to it again");
			try {
				if (this.agent.hasRemoteMetadata(name)) {
					this.agent.invalidateRemoteMetadata(name);
				}
				this.cache.forgetRemote(name);
				MetadataPublication publication = this.lifecycle.publication();
				if (publication != null) {
					publication.withdraw();
					publication.publish();
				}
			}
			catch (NixlException | IllegalStateException ex) {
				// the next request connects again all the same
				logger.warn("Could not reset the connection to '" + name + "': " + ex.getMessage());
			}
		}
	}

	private long verify(String requestId, int[] tokens, int[] local, long expectedCrc) {
		CRC32C crc = new CRC32C();
		KvCacheLayout layout = this.cache.layout();
		for (int region = 0; region < layout.regionCount(); region++) {
			for (int b = 0; b < local.length; b++) {
				var block = this.cache.block(region, local[b]);
				String wrong = this.model.check(block, region, tokens, b);
				if (wrong != null) {
					throw new SampleException(HttpStatus.BAD_GATEWAY, "KV blocks corrupted",
							"request '" + requestId + "': the pulled KV data is not what its prompt gives: " + wrong);
				}
				crc.update(block.asByteBuffer());
			}
		}
		if (crc.getValue() != expectedCrc) {
			throw new SampleException(HttpStatus.BAD_GATEWAY, "KV blocks corrupted",
					"request '" + requestId + "': CRC32C of the pulled blocks differs from the prefill worker's");
		}
		return crc.getValue();
	}

	/**
	 * Allocates local blocks for a lease; when there is no room, gives the lease back at
	 * once.
	 */
	private int[] allocate(PrefillResponse prefilled) {
		try {
			return this.cache.allocator().allocate(prefilled.blockIds().size());
		}
		catch (NixlException ex) {
			this.consumer.release(prefilled.transferParams());
			throw new SampleException(HttpStatus.SERVICE_UNAVAILABLE, "KV cache full",
					"the decode worker's KV cache " + "cannot hold request '" + prefilled.requestId() + "' now: "
							+ ex.getMessage() + "; its lease on the prefill worker was given back",
					ex);
		}
	}

	private SampleException layoutMismatch(String producerFingerprint) {
		return new SampleException(HttpStatus.CONFLICT, "KV layout mismatch",
				"the prefill worker's KV cache has layout " + producerFingerprint + " but this decode worker's has "
						+ this.cache.layout().fingerprint()
						+ ": both workers must serve the same model shape and dtype (nixl.kv.*)");
	}

	private int generatedLength(@Nullable Integer requested) {
		int length = Objects.requireNonNullElse(requested, this.properties.getDecode().getMaxTokens());
		if (length < 0 || length > MAX_GENERATED) {
			throw SampleException.badRequest("maxTokens must lie in [0, " + MAX_GENERATED + "], was " + length);
		}
		return length;
	}

	private Duration delay(@Nullable Long millis) {
		if (millis == null) {
			return Duration.ZERO;
		}
		Duration delay = Duration.ofMillis(millis);
		if (delay.isNegative() || delay.compareTo(this.properties.getDecode().getMaxDecodeDelay()) > 0) {
			throw SampleException.badRequest(
					"decodeDelayMillis must lie in [0, " + this.properties.getDecode().getMaxDecodeDelay().toMillis()
							+ "] (sample.decode.max-decode-delay), was " + millis);
		}
		return delay;
	}

	private static void sleep(Duration delay) {
		try {
			Thread.sleep(delay);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new SampleException(HttpStatus.SERVICE_UNAVAILABLE, "Interrupted", "the request was interrupted", ex);
		}
	}

	/**
	 * The engine, e.g. "native: NIXL 1.5.1 (...)" or "embedded: embedded engine (...)".
	 */
	private String engine() {
		return this.agent.engine().name().toLowerCase(Locale.ROOT) + ": " + this.agent.engineDescription();
	}

	private static double millis(long nanos) {
		return nanos / 1e6;
	}

}
