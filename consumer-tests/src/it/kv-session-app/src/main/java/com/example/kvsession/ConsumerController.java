package com.example.kvsession;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.kv.KvBlocks;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvTransferParams;
import dev.nixl4j.kv.PagedKvCache;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * The consumer role: {@code POST /fetch} asks the producer ({@code app.producer-url})
 * for a lease of freshly written blocks, pulls them with the starter's
 * {@link KvConsumer} and checks every byte against {@link KvPattern}; {@code POST /pull}
 * pulls the blocks of a lease the caller already has. Failures answer a problem whose
 * {@code type} names the failure's class. Local blocks are always given back.
 */
@RestController
@Profile("consumer")
class ConsumerController {

	/** The most bytes read from the producer's answer to a lease. */
	private static final int MAX_ANSWER = 1 << 20;

	private final PagedKvCache cache;

	private final KvConsumer consumer;

	private final NixlAgent agent;

	private final AccessToken token;

	private final JsonMapper json;

	private final URI leaseUri;

	private final URI corruptUri;

	private final Duration pullTimeout;

	private final Duration leaseTimeout;

	private final HttpClient http;

	ConsumerController(PagedKvCache cache, KvConsumer consumer, NixlAgent agent, AccessToken token, JsonMapper json,
			@Value("${app.producer-url}") URI producerUrl, @Value("${app.pull-timeout:10s}") Duration pullTimeout,
			@Value("${app.lease-timeout:5s}") Duration leaseTimeout) {
		this.cache = cache;
		this.consumer = consumer;
		this.agent = agent;
		this.token = token;
		this.json = json;
		this.leaseUri = producerUrl.resolve("/lease");
		this.corruptUri = producerUrl.resolve("/corrupt");
		this.pullTimeout = pullTimeout;
		this.leaseTimeout = leaseTimeout;
		this.http = HttpClient.newBuilder().connectTimeout(leaseTimeout).build();
	}

	/**
	 * Leases blocks from the producer (and, with {@code corrupt}, has the producer flip
	 * a byte of the first one after the lease was taken), pulls them and checks them.
	 * @param authorization the bearer token
	 * @param request the fetch
	 * @return what was verified, or a problem
	 */
	@PostMapping("/fetch")
	ResponseEntity<?> fetch(@RequestHeader(name = "Authorization", required = false) String authorization,
			@RequestBody FetchRequest request) {
		this.token.require(authorization);
		if (request.blocks() == null || request.blocks() < 1 || request.blocks() > ProducerController.MAX_BLOCKS) {
			return Problems.badRequest(
					"blocks must be between 1 and " + ProducerController.MAX_BLOCKS + ", was " + request.blocks());
		}
		if (request.seed() == null) {
			return Problems.badRequest("seed is required");
		}
		String requestId = "fetch-" + UUID.randomUUID();
		Answer lease = call(this.leaseUri, Map.of("requestId", requestId, "blocks", request.blocks(), "seed",
				request.seed()));
		if (lease.problem() != null) {
			return lease.problem();
		}
		KvTransferParams params;
		try {
			params = KvTransferParams.fromJson(new String(lease.body(), StandardCharsets.UTF_8));
		}
		catch (IllegalArgumentException ex) {
			return Problems.of(HttpStatus.BAD_GATEWAY, "LeaseRefused",
					"the producer's lease is not KV transfer parameters: " + ex.getMessage());
		}
		if (Boolean.TRUE.equals(request.corrupt())) {
			Answer corrupted = call(this.corruptUri, Map.of("requestId", requestId));
			if (corrupted.problem() != null) {
				this.consumer.release(params);
				return corrupted.problem();
			}
		}
		return pullAndCheck(params, request.seed());
	}

	/**
	 * Pulls the blocks of a lease the caller got from the producer and checks them.
	 * @param authorization the bearer token
	 * @param request the lease and its seed
	 * @return what was verified, or a problem
	 */
	@PostMapping("/pull")
	ResponseEntity<?> pull(@RequestHeader(name = "Authorization", required = false) String authorization,
			@RequestBody PullRequest request) {
		this.token.require(authorization);
		if (request.params() == null || request.seed() == null) {
			return Problems.badRequest("params and seed are required");
		}
		KvTransferParams params;
		try {
			params = KvTransferParams.fromJson(this.json.writeValueAsString(request.params()));
		}
		catch (JacksonException | IllegalArgumentException ex) {
			return Problems.badRequest("params are not KV transfer parameters: " + ex.getMessage());
		}
		if (params.blockIds().size() > ProducerController.MAX_BLOCKS) {
			return Problems.badRequest("at most " + ProducerController.MAX_BLOCKS + " blocks may be pulled");
		}
		return pullAndCheck(params, request.seed());
	}

	private ResponseEntity<?> pullAndCheck(KvTransferParams params, long seed) {
		long start = System.nanoTime();
		// the consumer takes the blocks from its cache and gives them back when they close
		try (KvBlocks blocks = this.consumer.pull(params, this.pullTimeout)) {
			KvPattern.Mismatch mismatch = KvPattern.check(this.cache, blocks.blockIds(), seed);
			if (mismatch != null) {
				return Problems.of(HttpStatus.INTERNAL_SERVER_ERROR, "PatternMismatch",
						"the pulled blocks differ from the pattern: " + mismatch);
			}
			Map<String, Object> verified = new LinkedHashMap<>();
			verified.put("verified", true);
			verified.put("bytes", blocks.bytes());
			verified.put("producer", params.producerAgent());
			verified.put("incarnation", params.producerIncarnation());
			verified.put("requestId", params.requestId());
			verified.put("engine", this.agent.engine().name());
			verified.put("millis", Duration.ofNanos(System.nanoTime() - start).toMillis());
			return ResponseEntity.ok(verified);
		}
		catch (NixlException ex) {
			ResponseEntity<Map<String, Object>> problem = Problems.of(ex);
			problem.getBody().put("millis", Duration.ofNanos(System.nanoTime() - start).toMillis());
			return problem;
		}
	}

	/** POSTs a JSON document to the producer with the token; reads at most 1 MiB back. */
	private Answer call(URI uri, Map<String, Object> document) {
		HttpRequest request = HttpRequest.newBuilder(uri)
			.timeout(this.leaseTimeout)
			.header("Authorization", this.token.header())
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofByteArray(this.json.writeValueAsBytes(document)))
			.build();
		HttpResponse<InputStream> response;
		byte[] body;
		try {
			response = this.http.send(request, HttpResponse.BodyHandlers.ofInputStream());
			try (InputStream in = response.body()) {
				body = in.readNBytes(MAX_ANSWER + 1);
			}
		}
		catch (IOException ex) {
			return new Answer(null, Problems.of(HttpStatus.SERVICE_UNAVAILABLE, "LeaseUnavailable",
					"the producer at " + uri + " cannot be reached: " + ex));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return new Answer(null, Problems.of(HttpStatus.SERVICE_UNAVAILABLE, "LeaseUnavailable",
					"interrupted while calling " + uri));
		}
		if (body.length > MAX_ANSWER) {
			return new Answer(null, Problems.of(HttpStatus.BAD_GATEWAY, "LeaseRefused",
					"the producer at " + uri + " answered more than " + MAX_ANSWER + " bytes"));
		}
		if (response.statusCode() != 200) {
			return new Answer(null, Problems.of(HttpStatus.BAD_GATEWAY, "LeaseRefused", "the producer at " + uri
					+ " answered " + response.statusCode() + ": " + new String(body, StandardCharsets.UTF_8)));
		}
		return new Answer(body, null);
	}

	private record Answer(byte[] body, ResponseEntity<?> problem) {
	}

	/**
	 * A fetch asked for.
	 *
	 * @param blocks how many blocks
	 * @param seed the pattern's seed
	 * @param corrupt whether the producer flips a byte after leasing (needs its
	 * {@code app.allow-corruption=true})
	 */
	record FetchRequest(Integer blocks, Long seed, Boolean corrupt) {
	}

	/**
	 * A pull of a lease the caller has.
	 *
	 * @param params the lease's parameters in their wire form, as the producer's
	 * {@code /lease} answered them
	 * @param seed the pattern's seed
	 */
	record PullRequest(Map<String, Object> params, Long seed) {
	}

}
