package dev.nixl4j.resilience4j;

import java.util.function.Predicate;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataExchange;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;

/**
 * Wraps a metadata exchange ({@link #wrap}) so that {@link MetadataExchange#fetch fetch}
 * and {@link MetadataExchange#load load} are retried by the {@value #NAME} retry of the
 * {@link RetryRegistry}. Each attempt gets the caller's full deadline, so the whole call
 * may take up to {@code maxAttempts} times the deadline plus the waits between attempts.
 *
 * <p>
 * Only failures that a later attempt can cure are retried: {@link NixlStatus#TIMEOUT}
 * (the peer has not published its metadata yet, for example because it is still starting)
 * and {@link NixlStatus#UNAVAILABLE} (the exchange could not be reached). Everything else
 * fails at once, in particular {@link NixlStatus#INVALID_METADATA} (a value that is not
 * the peer's metadata will not become so), a refused token, a closed exchange, an
 * interrupted wait and {@link NixlStatus#ERROR_NOT_FOUND} from loading the metadata into
 * the agent (no backend in common with the peer: a configuration problem). The instance's
 * own {@code retry-exceptions}/{@code ignore-exceptions} narrow this further but cannot
 * widen it.
 *
 * <p>
 * The retry takes the configuration of the registry's {@value #NAME} instance when it has
 * one (with Spring Boot: {@code resilience4j.retry.instances.nixl-metadata}), else the
 * registry's default configuration. It stays registered in the registry, so
 * Resilience4j's events, endpoint and {@code resilience4j.retry.*} metrics report it.
 * Publishing and withdrawing are not retried.
 */
public final class MetadataExchangeRetry {

	/** Name of the retry of metadata fetches and loads. */
	public static final String NAME = "nixl-metadata";

	private static final Predicate<Throwable> RETRYABLE = MetadataExchangeRetry::isRetryable;

	private final Retry retry;

	/**
	 * Creates the wrapper and registers its retry.
	 * @param registry the registry that holds (or receives) the {@value #NAME} retry
	 */
	public MetadataExchangeRetry(RetryRegistry registry) {
		this.retry = register(registry);
	}

	private static Retry register(RetryRegistry registry) {
		Retry configured = registry.find(NAME).orElse(null);
		RetryConfig base = (configured != null) ? configured.getRetryConfig() : registry.getDefaultConfig();
		Predicate<Throwable> baseRetries = base.getExceptionPredicate();
		// retry-exceptions would be or-ed with the predicate: they are part of
		// baseRetries already
		RetryConfig config = RetryConfig.from(base)
			.retryOnException(RETRYABLE.and(baseRetries))
			.retryExceptions()
			.ignoreExceptions()
			.build();
		if (configured == null) {
			return registry.retry(NAME, config);
		}
		Retry retry = Retry.of(NAME, config, configured.getTags());
		registry.replace(NAME, retry);
		return retry;
	}

	/**
	 * Whether a failure of a fetch or load is retried.
	 * @param failure the failure
	 * @return {@code true} for a {@link NixlException} with status
	 * {@link NixlStatus#TIMEOUT} or {@link NixlStatus#UNAVAILABLE}
	 */
	public static boolean isRetryable(Throwable failure) {
		return failure instanceof NixlException ex
				&& (ex.status() == NixlStatus.TIMEOUT || ex.status() == NixlStatus.UNAVAILABLE);
	}

	/**
	 * Returns the retry used for fetches and loads.
	 * @return the registered retry
	 */
	public Retry retry() {
		return this.retry;
	}

	/**
	 * Wraps an exchange: its fetches and loads are retried, everything else goes straight
	 * to it. Closing the returned exchange closes the one given.
	 * @param exchange the exchange that does the work
	 * @return the retrying exchange
	 */
	public MetadataExchange wrap(MetadataExchange exchange) {
		return new RetryingMetadataExchange(exchange, this.retry);
	}

}
