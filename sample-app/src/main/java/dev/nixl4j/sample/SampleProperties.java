package dev.nixl4j.sample;

import java.net.URI;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Properties of the sample application ({@code sample.*}); the KV cache and the agent are the
 * starter's ({@code nixl.*}).
 */
@ConfigurationProperties("sample")
public class SampleProperties {

	/**
	 * Bearer token that the prefill worker requires on its sample API ({@code /prefill},
	 * {@code /kv/handle}) and that the decode worker sends. Defaults to the metadata registry's
	 * token.
	 */
	private @Nullable String token;

	/**
	 * Longest prompt, in tokens, that a worker accepts.
	 */
	private int maxPromptTokens = 8192;

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

	public Decode getDecode() {
		return this.decode;
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
		 * How long a call to the prefill worker may take, its fill of the blocks included.
		 */
		private Duration prefillTimeout = Duration.ofSeconds(30);

		/**
		 * How long a pull (the READ of a request's blocks and the lease confirmation) may take.
		 */
		private Duration transferTimeout = Duration.ofSeconds(30);

		/**
		 * Characters generated per request when the request does not say.
		 */
		private int maxTokens = 32;

		/**
		 * Longest simulated queue wait (the decodeDelayMillis of a request) a request may ask for.
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
