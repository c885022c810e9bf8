package dev.nixl4j.autoconfigure.resilience;

import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.NixlProperties;
import dev.nixl4j.autoconfigure.NixlTimeouts;
import dev.nixl4j.resilience4j.TransferTimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * {@link NixlTimeouts} from Resilience4j's {@value TransferTimeLimiter#NAME} time limiter
 * (nixl-resilience4j's {@link TransferTimeLimiter}). It runs before
 * {@link NixlAutoConfiguration}, whose bean reads {@code nixl.transfer.timeout} and backs
 * off.
 *
 * <p>
 * The time limiter is {@code resilience4j.timelimiter.instances.nixl-transfer} when that
 * is configured; otherwise it is created from the registry's default configuration with
 * {@code timeoutDuration} set to {@code nixl.transfer.timeout}, so that adding
 * Resilience4j does not change the deadline. It is registered in the registry, where
 * Resilience4j's metrics and endpoint see it.
 */
@AutoConfiguration(before = NixlAutoConfiguration.class,
		afterName = "io.github.resilience4j.springboot.timelimiter.autoconfigure.TimeLimiterAutoConfiguration")
@ConditionalOnClass({ TimeLimiterRegistry.class, TransferTimeLimiter.class })
@ConditionalOnBean(TimeLimiterRegistry.class)
@EnableConfigurationProperties(NixlProperties.class)
public final class NixlTimeLimiterAutoConfiguration {

	NixlTimeLimiterAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	NixlTimeouts nixlTimeouts(TimeLimiterRegistry registry, NixlProperties properties) {
		return new TimeLimiterNixlTimeouts(
				TransferTimeLimiter.builder(registry).defaultTimeout(properties.getTransfer().getTimeout()).build());
	}

}
