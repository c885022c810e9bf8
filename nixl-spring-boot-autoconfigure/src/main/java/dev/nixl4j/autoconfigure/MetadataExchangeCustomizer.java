package dev.nixl4j.autoconfigure;

import dev.nixl4j.metadata.MetadataExchange;

/**
 * Changes or wraps the auto-configured {@link MetadataExchange} before it becomes a bean,
 * for example to add retries or tracing. Beans of this type are applied in
 * {@link org.springframework.core.Ordered order}, each to the result of the one before.
 */
@FunctionalInterface
public interface MetadataExchangeCustomizer {

	/**
	 * Customizes the exchange.
	 * @param exchange the exchange so far
	 * @return the exchange to use: the one given, or one that delegates to it and closes
	 * it
	 */
	MetadataExchange customize(MetadataExchange exchange);

}
