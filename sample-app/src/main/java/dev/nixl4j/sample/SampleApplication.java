package dev.nixl4j.sample;

import java.util.Arrays;

import dev.nixl4j.kv.KvCacheLayout;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.core.env.Profiles;

/**
 * The sample: one Spring Boot application that runs as a prefill worker
 * ({@code --spring.profiles.active=prefill}) or a decode worker ({@code decode}). The jar
 * starts it through {@link dev.nixl4j.sample.launch.SampleLauncher}, which runs the load
 * generator instead when the first argument is {@code load}.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class SampleApplication {

	/** The prefill role's profile. */
	public static final String PREFILL = "prefill";

	/** The decode role's profile. */
	public static final String DECODE = "decode";

	/**
	 * Starts a worker.
	 * @param args Spring Boot arguments
	 */
	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

	/**
	 * The role this process runs: exactly one of the two profiles, its own token, and for
	 * the prefill worker the decode worker's token; anything else stops the start with
	 * what to do.
	 */
	@Bean
	String sampleRole(Environment environment, SampleProperties properties) {
		boolean prefill = environment.acceptsProfiles(Profiles.of(PREFILL));
		boolean decode = environment.acceptsProfiles(Profiles.of(DECODE));
		if (prefill == decode) {
			throw new IllegalStateException("the sample runs as exactly one role: start it with "
					+ "--spring.profiles.active=prefill or --spring.profiles.active=decode (active profiles: "
					+ Arrays.toString(environment.getActiveProfiles()) + ")");
		}
		String token = properties.getToken();
		if (token == null || token.isBlank()) {
			throw new IllegalStateException("sample.token is not set: give each worker its own token (by default "
					+ "nixl.metadata.http.token, i.e. the NIXL_PREFILL_TOKEN or NIXL_DECODE_TOKEN environment variable)");
		}
		if (prefill && properties.getPeerTokens().isEmpty()) {
			throw new IllegalStateException("sample.peer-tokens is empty: the prefill worker takes /prefill only from "
					+ "the decode worker's token, so give it NIXL_DECODE_TOKEN too");
		}
		return prefill ? PREFILL : DECODE;
	}

	@Bean
	ToyModel toyModel(KvCacheLayout layout) {
		return new ToyModel(layout);
	}

}
