package dev.nixl4j.sample.decode;

import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.sample.SampleApplication;
import dev.nixl4j.sample.SampleProperties;

import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import org.springframework.core.Ordered;

/**
 * The decode worker's shares per caller ({@link CallerShares}) and the filter that takes
 * a request's slot before its body is read ({@link GenerateAdmissionFilter}).
 */
@Configuration(proxyBeanMethods = false)
@Profile(SampleApplication.DECODE)
class DecodeConfiguration {

	@Bean
	CallerShares sampleCallerShares(SampleProperties properties, PagedKvCache cache) {
		return new CallerShares(properties.getGenerate(), cache.allocator().capacity(), properties.getRetryAfter());
	}

	@Bean
	FilterRegistrationBean<GenerateAdmissionFilter> sampleGenerateAdmissionFilter(CallerShares shares) {
		FilterRegistrationBean<GenerateAdmissionFilter> registration = new FilterRegistrationBean<>(
				new GenerateAdmissionFilter(shares));
		registration.addUrlPatterns("/generate");
		// After the workers' authentication (the caller's token), before the body limit:
		// a caller over its share is refused before its body is read.
		registration.setOrder(Ordered.LOWEST_PRECEDENCE - 1);
		return registration;
	}

}
