package dev.nixl4j.sample;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Properties of the sample application ({@code sample.*}); the KV cache and the agent are
 * the starter's ({@code nixl.*}). Every value is checked when it is bound: a bad one
 * stops the start with Spring Boot's report naming the property and the value.
 */
@ConfigurationProperties("sample")
public class SampleProperties implements Validator {

	/** The most prompt tokens a worker may be configured to accept. */
	public static final int MAX_PROMPT_TOKENS = 1 << 20;

	/** The most characters a request may be configured to generate by default. */
	public static final int MAX_GENERATED_TOKENS = 1 << 16;

	/** The largest request body the sample's endpoints may be configured to read. */
	public static final DataSize MAX_REQUEST_BYTES = DataSize.ofMegabytes(64);

	/** The most requests a worker may be configured to serve at once. */
	public static final int MAX_CONCURRENT = 1 << 16;

	/** The most threads the model's matrix products may be configured to use. */
	public static final int MAX_MODEL_THREADS = 256;

	/**
	 * This worker's own bearer token: the decode worker sends it to the prefill worker,
	 * and every worker takes it from a caller as a worker's (the parts of its API
	 * reserved to workers, its meters, names in its health and /actuator/nixl). Defaults
	 * to the worker's registry token, nixl.metadata.http.token (NIXL_PREFILL_TOKEN or
	 * NIXL_DECODE_TOKEN).
	 */
	private @Nullable String token;

	/**
	 * Bearer tokens of other workers that this worker takes besides its own: the prefill
	 * worker takes the decode worker's (NIXL_DECODE_TOKEN) on /prefill. Never logged.
	 */
	private List<String> peerTokens = new ArrayList<>();

	/**
	 * Longest prompt, in tokens, that a worker accepts.
	 */
	private int maxPromptTokens = 8192;

	/**
	 * Largest request body that the sample's endpoints ({@code /prefill},
	 * {@code /generate}) read; a larger one is answered 413 before it is parsed. Sized
	 * for the longest prompt as token ids (8,192 ids of up to 7 digits) or as escaped
	 * text.
	 */
	private DataSize maxRequestBytes = DataSize.ofKilobytes(256);

	/**
	 * Longest time that reading a request body of the sample's endpoints may take, from
	 * its first byte to its last; a slower body is answered 408.
	 */
	private Duration requestBodyTimeout = Duration.ofSeconds(10);

	/**
	 * What a worker's 429 or 503 for a full share, a full cache or a busy worker tells
	 * the caller to wait before it retries: the Retry-After header, in whole seconds (at
	 * least 1).
	 */
	private Duration retryAfter = Duration.ofSeconds(1);

	private final Server server = new Server();

	private final Decode decode = new Decode();

	private final Generate generate = new Generate();

	private final Prefill prefill = new Prefill();

	private final Model model = new Model();

	public @Nullable String getToken() {
		return this.token;
	}

	public void setToken(@Nullable String token) {
		this.token = token;
	}

	public List<String> getPeerTokens() {
		return this.peerTokens;
	}

	public void setPeerTokens(List<String> peerTokens) {
		this.peerTokens = peerTokens;
	}

	public int getMaxPromptTokens() {
		return this.maxPromptTokens;
	}

	public void setMaxPromptTokens(int maxPromptTokens) {
		this.maxPromptTokens = maxPromptTokens;
	}

	public DataSize getMaxRequestBytes() {
		return this.maxRequestBytes;
	}

	public void setMaxRequestBytes(DataSize maxRequestBytes) {
		this.maxRequestBytes = maxRequestBytes;
	}

	public Duration getRequestBodyTimeout() {
		return this.requestBodyTimeout;
	}

	public void setRequestBodyTimeout(Duration requestBodyTimeout) {
		this.requestBodyTimeout = requestBodyTimeout;
	}

	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	public void setRetryAfter(Duration retryAfter) {
		this.retryAfter = retryAfter;
	}

	public Server getServer() {
		return this.server;
	}

	public Decode getDecode() {
		return this.decode;
	}

	public Generate getGenerate() {
		return this.generate;
	}

	public Prefill getPrefill() {
		return this.prefill;
	}

	public Model getModel() {
		return this.model;
	}

	@Override
	public boolean supports(Class<?> type) {
		return SampleProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		SampleProperties properties = (SampleProperties) target;
		String token = properties.getToken();
		if (token == null || token.isBlank()) {
			// no value to show: it is empty, and a token is a secret anyway
			errors.reject("sample.invalid",
					"sample.token (by default nixl.metadata.http.token, which the NIXL_PREFILL_TOKEN environment "
							+ "variable sets for the prefill worker and NIXL_DECODE_TOKEN for the decode worker) is "
							+ "empty: set the worker's token (16 or more visible characters; each worker has its own, "
							+ "and NIXL_TOKEN, which both used to share, is no longer read)");
		}
		if (properties.getPeerTokens().stream().anyMatch((peer) -> peer == null || peer.isBlank())) {
			errors.reject("sample.invalid", "sample.peer-tokens (on the prefill worker by default NIXL_DECODE_TOKEN, "
					+ "the decode worker's token) holds an empty token: set NIXL_DECODE_TOKEN for the prefill worker too");
		}
		range(errors, "maxPromptTokens", properties.getMaxPromptTokens(), 1, MAX_PROMPT_TOKENS);
		DataSize maxRequestBytes = properties.getMaxRequestBytes();
		if (maxRequestBytes == null || maxRequestBytes.toBytes() < 1
				|| maxRequestBytes.compareTo(MAX_REQUEST_BYTES) > 0) {
			errors.rejectValue("max-request-bytes", "sample.invalid", "must be between 1B and " + MAX_REQUEST_BYTES);
		}
		positive(errors, "request-body-timeout", properties.getRequestBodyTimeout());
		positive(errors, "server.request-header-timeout", properties.getServer().getRequestHeaderTimeout());
		Decode decode = properties.getDecode();
		URI prefillUrl = decode.getPrefillUrl();
		if (prefillUrl == null || !("http".equals(prefillUrl.getScheme()) || "https".equals(prefillUrl.getScheme()))
				|| prefillUrl.getHost() == null) {
			errors.rejectValue("decode.prefill-url", "sample.invalid",
					"must be an absolute http or https URL with a host, for example http://127.0.0.1:8081");
		}
		positive(errors, "decode.connect-timeout", decode.getConnectTimeout());
		positive(errors, "decode.prefill-timeout", decode.getPrefillTimeout());
		positive(errors, "decode.transfer-timeout", decode.getTransferTimeout());
		range(errors, "decode.maxTokens", decode.getMaxTokens(), 1, MAX_GENERATED_TOKENS);
		positive(errors, "decode.max-decode-delay", decode.getMaxDecodeDelay());
		Generate generate = properties.getGenerate();
		range(errors, "generate.maxConcurrentRequests", generate.getMaxConcurrentRequests(), 1, MAX_CONCURRENT);
		range(errors, "generate.maxConcurrentRequestsPerCaller", generate.getMaxConcurrentRequestsPerCaller(), 1,
				MAX_CONCURRENT);
		if (generate.getMaxConcurrentAnonymousRequests() != null) {
			range(errors, "generate.maxConcurrentAnonymousRequests", generate.getMaxConcurrentAnonymousRequests(), 1,
					MAX_CONCURRENT);
		}
		if (generate.getMaxBlocksPerCaller() != null) {
			range(errors, "generate.maxBlocksPerCaller", generate.getMaxBlocksPerCaller(), 1, Integer.MAX_VALUE);
		}
		if (generate.getMaxAnonymousBlocks() != null) {
			range(errors, "generate.maxAnonymousBlocks", generate.getMaxAnonymousBlocks(), 1, Integer.MAX_VALUE);
		}
		positive(errors, "retry-after", properties.getRetryAfter());
		range(errors, "model.threads", properties.getModel().getThreads(), 0, MAX_MODEL_THREADS);
	}

	private static void range(Errors errors, String field, int value, int min, int max) {
		if (value < min || value > max) {
			errors.rejectValue(field.replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT), "sample.invalid",
					"must be between " + min + " and " + max);
		}
	}

	private static void positive(Errors errors, String field, @Nullable Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			errors.rejectValue(field, "sample.invalid", "must be a positive duration, for example 30s");
		}
	}

	/**
	 * The embedded Tomcat of both roles, beyond Spring Boot's {@code server.tomcat.*}.
	 */
	public static class Server {

		/**
		 * Longest time from the first byte of a request to the end of its headers (blank
		 * lines before a request count from the first). Tomcat's own timeouts apply to
		 * each read, so a client that sends a byte now and then could otherwise hold a
		 * connection for ever; a connection past this deadline is closed.
		 */
		private Duration requestHeaderTimeout = Duration.ofSeconds(10);

		public Duration getRequestHeaderTimeout() {
			return this.requestHeaderTimeout;
		}

		public void setRequestHeaderTimeout(Duration requestHeaderTimeout) {
			this.requestHeaderTimeout = requestHeaderTimeout;
		}

	}

	/**
	 * The decode role.
	 */
	public static class Decode {

		/**
		 * Base URL of the prefill worker.
		 */
		private URI prefillUrl = URI.create("http://127.0.0.1:8081");

		/**
		 * How long connecting to the prefill worker may take.
		 */
		private Duration connectTimeout = Duration.ofSeconds(2);

		/**
		 * How long a call to the prefill worker may take, its fill of the blocks
		 * included.
		 */
		private Duration prefillTimeout = Duration.ofSeconds(30);

		/**
		 * How long a pull (the READ of a request's blocks and the lease confirmation) may
		 * take.
		 */
		private Duration transferTimeout = Duration.ofSeconds(30);

		/**
		 * Characters generated per request when the request does not say.
		 */
		private int maxTokens = 32;

		/**
		 * Longest simulated queue wait (the decodeDelayMillis of a request) a request may
		 * ask for.
		 */
		private Duration maxDecodeDelay = Duration.ofMinutes(1);

		public URI getPrefillUrl() {
			return this.prefillUrl;
		}

		public void setPrefillUrl(URI prefillUrl) {
			this.prefillUrl = prefillUrl;
		}

		public Duration getConnectTimeout() {
			return this.connectTimeout;
		}

		public void setConnectTimeout(Duration connectTimeout) {
			this.connectTimeout = connectTimeout;
		}

		public Duration getPrefillTimeout() {
			return this.prefillTimeout;
		}

		public void setPrefillTimeout(Duration prefillTimeout) {
			this.prefillTimeout = prefillTimeout;
		}

		public Duration getTransferTimeout() {
			return this.transferTimeout;
		}

		public void setTransferTimeout(Duration transferTimeout) {
			this.transferTimeout = transferTimeout;
		}

		public int getMaxTokens() {
			return this.maxTokens;
		}

		public void setMaxTokens(int maxTokens) {
			this.maxTokens = maxTokens;
		}

		public Duration getMaxDecodeDelay() {
			return this.maxDecodeDelay;
		}

		public void setMaxDecodeDelay(Duration maxDecodeDelay) {
			this.maxDecodeDelay = maxDecodeDelay;
		}

	}

	/**
	 * The decode worker's public endpoint, {@code POST /generate}: how much of the worker
	 * its callers may hold at once. A caller is a holder of a worker's token (all of them
	 * together count as one, held to the total only) or else the address it sends from
	 * (docs/operations.md, "Callers of the sample").
	 */
	public static class Generate {

		/**
		 * Most {@code POST /generate} requests that the decode worker serves at once; one
		 * more is answered 503 at once, with Retry-After, without waiting.
		 */
		private int maxConcurrentRequests = 64;

		/**
		 * Most requests that one caller without a worker's token (one address) may have
		 * served at once; one more is answered 429 at once, with Retry-After.
		 */
		private int maxConcurrentRequestsPerCaller = 8;

		/**
		 * Most requests that all callers without a worker's token together may have
		 * served at once; one more is answered 503 at once, with Retry-After. The rest of
		 * max-concurrent-requests stays for token holders. Defaults to three quarters of
		 * max-concurrent-requests.
		 */
		private @Nullable Integer maxConcurrentAnonymousRequests;

		/**
		 * Most KV blocks that the requests of one caller without a worker's token may
		 * hold at once (a request holds its prompt's blocks, on both workers, until it is
		 * answered); a request that would pass it is answered 429 with Retry-After, and
		 * one that needs more on its own 429 without it. Defaults to a quarter of
		 * nixl.kv.blocks, one request of the longest prompt the prefill worker leases.
		 */
		private @Nullable Integer maxBlocksPerCaller;

		/**
		 * Most KV blocks that the requests of all callers without a worker's token
		 * together may hold at once; a request that would pass it is answered 503 with
		 * Retry-After. Of the prefill worker's share for this decode worker
		 * (sample.prefill.max-blocks-per-consumer, three quarters of nixl.kv.blocks) the
		 * rest stays for token holders. Defaults to half of nixl.kv.blocks.
		 */
		private @Nullable Integer maxAnonymousBlocks;

		public int getMaxConcurrentRequests() {
			return this.maxConcurrentRequests;
		}

		public void setMaxConcurrentRequests(int maxConcurrentRequests) {
			this.maxConcurrentRequests = maxConcurrentRequests;
		}

		public int getMaxConcurrentRequestsPerCaller() {
			return this.maxConcurrentRequestsPerCaller;
		}

		public void setMaxConcurrentRequestsPerCaller(int maxConcurrentRequestsPerCaller) {
			this.maxConcurrentRequestsPerCaller = maxConcurrentRequestsPerCaller;
		}

		public @Nullable Integer getMaxConcurrentAnonymousRequests() {
			return this.maxConcurrentAnonymousRequests;
		}

		public void setMaxConcurrentAnonymousRequests(@Nullable Integer maxConcurrentAnonymousRequests) {
			this.maxConcurrentAnonymousRequests = maxConcurrentAnonymousRequests;
		}

		public @Nullable Integer getMaxBlocksPerCaller() {
			return this.maxBlocksPerCaller;
		}

		public void setMaxBlocksPerCaller(@Nullable Integer maxBlocksPerCaller) {
			this.maxBlocksPerCaller = maxBlocksPerCaller;
		}

		public @Nullable Integer getMaxAnonymousBlocks() {
			return this.maxAnonymousBlocks;
		}

		public void setMaxAnonymousBlocks(@Nullable Integer maxAnonymousBlocks) {
			this.maxAnonymousBlocks = maxAnonymousBlocks;
		}

	}

	/**
	 * The prefill worker's shares of its KV cache: no request and no decode worker may
	 * lease the whole cache.
	 */
	public static class Prefill {

		/**
		 * Most blocks that one request may lease; a request that needs more is answered
		 * 429 and nothing is taken. Defaults to a quarter of the cache's blocks
		 * ({@code nixl.kv.blocks}).
		 */
		private @Nullable Integer maxBlocksPerRequest;

		/**
		 * Most blocks leased at once to one consumer, the decode worker's agent named in
		 * its requests (requests that name none count as one consumer); a request that
		 * would take it past this is answered 429 and nothing is taken. Defaults to three
		 * quarters of the cache's blocks ({@code nixl.kv.blocks}).
		 */
		private @Nullable Integer maxBlocksPerConsumer;

		public @Nullable Integer getMaxBlocksPerRequest() {
			return this.maxBlocksPerRequest;
		}

		public void setMaxBlocksPerRequest(@Nullable Integer maxBlocksPerRequest) {
			this.maxBlocksPerRequest = maxBlocksPerRequest;
		}

		public @Nullable Integer getMaxBlocksPerConsumer() {
			return this.maxBlocksPerConsumer;
		}

		public void setMaxBlocksPerConsumer(@Nullable Integer maxBlocksPerConsumer) {
			this.maxBlocksPerConsumer = maxBlocksPerConsumer;
		}

	}

	/**
	 * The language model both workers run (SmolLM2-135M-Instruct, a GGUF file): the
	 * prefill worker computes a prompt's KV cache into leased blocks and its first token,
	 * the decode worker generates over the blocks it pulled. Without a path, the workers
	 * serve the toy model, whose KV bytes are a function of the prompt (the synthetic
	 * load). The {@code smollm2} profile sets the path and the cache layout the model
	 * needs.
	 */
	public static class Model {

		/**
		 * The model file (GGUF). Its shape must match {@code nixl.kv.*}: one K and one V
		 * region per layer, its KV heads and head dimension, 4-byte elements, HND order;
		 * another shape stops the start, naming the value that differs.
		 */
		private @Nullable Path path;

		/**
		 * Threads of the model's matrix products; 0 for one per available processor.
		 */
		private int threads;

		public @Nullable Path getPath() {
			return this.path;
		}

		public void setPath(@Nullable Path path) {
			this.path = path;
		}

		public int getThreads() {
			return this.threads;
		}

		public void setThreads(int threads) {
			this.threads = threads;
		}

	}

}
