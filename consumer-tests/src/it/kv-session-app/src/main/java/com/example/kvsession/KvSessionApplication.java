package com.example.kvsession;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A KV producer ({@code --spring.profiles.active=producer}) or a KV consumer
 * ({@code --spring.profiles.active=consumer}), built on the nixl4j starter alone: the
 * producer leases blocks of the starter's paged KV cache, the consumer pulls them with
 * the starter's KV consumer, which owns the session with the producer, and serves the
 * metadata registry that the producer publishes to.
 */
@SpringBootApplication
public class KvSessionApplication {

	/**
	 * Starts the service.
	 * @param args Spring Boot's arguments, for example {@code --server.port=8080}
	 */
	public static void main(String[] args) {
		SpringApplication.run(KvSessionApplication.class, args);
	}

}
