package dev.nixl4j.sample.web;

import dev.nixl4j.sample.SampleProperties;
import dev.nixl4j.sample.WorkerToken;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.type.LogicalType;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.boot.tomcat.TomcatProtocolHandlerCustomizer;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

/**
 * The limits of both roles' HTTP server: request bodies
 * ({@code sample.max-request-bytes}, {@code sample.request-body-timeout}), request
 * headers ({@code sample.server.request-header-timeout}) and strict JSON types; and who
 * is a worker: a caller that presents a worker's token is authenticated, and only such a
 * caller reads the meters.
 */
@Configuration(proxyBeanMethods = false)
class SampleWebConfiguration {

	/**
	 * The Actuator endpoints that name agents (tag values of the nixl meters): what a
	 * holder of a registry token would look for, so behind the workers' tokens like the
	 * prefill API. Health and {@code /actuator/nixl} stay open, and show details and
	 * names only to a caller that presents a worker's token
	 * ({@link WorkerAuthenticationFilter}): others get the status, counts and sizes.
	 */
	static final String[] METER_ENDPOINTS = { "/actuator/metrics", "/actuator/metrics/*", "/actuator/prometheus" };

	/** The sample's own endpoints; the metadata registry has its own size cap. */
	private static final String[] SAMPLE_ENDPOINTS = { "/prefill", "/kv/*", "/generate" };

	@Bean
	FilterRegistrationBean<RequestBodyLimitFilter> sampleRequestBodyLimitFilter(SampleProperties properties) {
		FilterRegistrationBean<RequestBodyLimitFilter> registration = new FilterRegistrationBean<>(
				new RequestBodyLimitFilter(properties.getMaxRequestBytes().toBytes(),
						properties.getRequestBodyTimeout()));
		registration.addUrlPatterns(SAMPLE_ENDPOINTS);
		// After the bearer token: a request without it is refused before its body is
		// read.
		registration.setOrder(Ordered.LOWEST_PRECEDENCE);
		return registration;
	}

	@Bean
	FilterRegistrationBean<WorkerAuthenticationFilter> sampleWorkerAuthenticationFilter(WorkerToken token) {
		FilterRegistrationBean<WorkerAuthenticationFilter> registration = new FilterRegistrationBean<>(
				new WorkerAuthenticationFilter(token));
		registration.addUrlPatterns("/*");
		// First: every later filter, Actuator and the sample's answers see the principal.
		registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
		return registration;
	}

	@Bean
	FilterRegistrationBean<BearerTokenFilter> sampleMeterTokenFilter(WorkerToken token) {
		FilterRegistrationBean<BearerTokenFilter> registration = new FilterRegistrationBean<>(
				new BearerTokenFilter(token));
		registration.addUrlPatterns(METER_ENDPOINTS);
		return registration;
	}

	@Bean
	WebServerFactoryCustomizer<TomcatServletWebServerFactory> sampleHeaderDeadlineProtocol() {
		return (factory) -> factory.setProtocol(HeaderDeadlineProtocol.class.getName());
	}

	@Bean
	TomcatProtocolHandlerCustomizer<HeaderDeadlineProtocol> sampleRequestHeaderTimeout(SampleProperties properties,
			ObjectProvider<MeterRegistry> meters) {
		long millis = properties.getServer().getRequestHeaderTimeout().toMillis();
		if (millis <= 0) {
			throw new IllegalStateException("sample.server.request-header-timeout must be positive, not "
					+ properties.getServer().getRequestHeaderTimeout());
		}
		return (protocol) -> {
			protocol.setRequestHeaderTimeout(millis);
			meters.ifAvailable((registry) -> FunctionCounter
				.builder("sample.server.request-header-timeouts", protocol,
						HeaderDeadlineProtocol::getRequestHeaderTimeouts)
				.description("Connections closed because their request headers were not complete within "
						+ "sample.server.request-header-timeout")
				.register(registry));
		};
	}

	@Bean
	JsonMapperBuilderCustomizer sampleStrictJson() {
		return StrictJson::configure;
	}

	/**
	 * Jackson settings under which a request's JSON must have the types of its record: no
	 * number or boolean read as text, no fraction as an integer, no text as a number, no
	 * property the record does not have.
	 */
	static final class StrictJson {

		private StrictJson() {
		}

		static void configure(JsonMapper.Builder builder) {
			builder.disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
				.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
				.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
				.enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
				.withCoercionConfig(LogicalType.Textual,
						(config) -> config.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
							.setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
							.setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
				.withCoercionConfig(LogicalType.Integer,
						(config) -> config.setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
							.setCoercion(CoercionInputShape.String, CoercionAction.Fail));
		}

	}

}
