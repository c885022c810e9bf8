package dev.nixl4j.sample;

import java.net.URI;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Properties of the sample application ({@code sample.*}); the KV cache and the agent are
 * the starter's ({@code nixl.*}).
 */
@ConfigurationProperties("sample")
public class SampleProperties {

	/**
	 * Bearer token that the prefill worker requires on its sample API ({@code /prefill},
	 * {@code /kv/handle}) and that the decode worker sends. Defaults to the metadata
	 * registry's token.
	 */
	private @Nullable String token;

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

	private final Server server = new Server();

	private final Decode decode = new Decode();

	public @Nullable String getToken() {
		return this.token;
	}

	public void setToken(@Nullable String token) {
		this.token = token;
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

	public Server getServer() {
		return this.server;
	}

	public Decode getDecode() {
		return this.decode;
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

}
