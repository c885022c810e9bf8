package dev.nixl4j.sample.prefill;

import dev.nixl4j.sample.SampleApplication;
import dev.nixl4j.sample.WorkerToken;
import dev.nixl4j.sample.web.BearerTokenFilter;

import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import org.springframework.core.Ordered;

/**
 * Puts the prefill worker's API behind the bearer token.
 */
@Configuration(proxyBeanMethods = false)
@Profile(SampleApplication.PREFILL)
class PrefillConfiguration {

	@Bean
	FilterRegistrationBean<BearerTokenFilter> sampleBearerTokenFilter(WorkerToken token) {
		FilterRegistrationBean<BearerTokenFilter> registration = new FilterRegistrationBean<>(
				new BearerTokenFilter(token));
		registration.addUrlPatterns("/prefill", "/kv/*");
		// Before the body limit: a request without the token is refused before its body
		// is read.
		registration.setOrder(Ordered.LOWEST_PRECEDENCE - 1);
		return registration;
	}

}
