package com.example.nixlconsumer;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A service that shares one buffer through NIXL and reads the buffers of its peers.
 */
@SpringBootApplication
public class ConsumerApplication {

	/**
	 * Starts the service.
	 * @param args Spring Boot's arguments, for example {@code --server.port=8080}
	 */
	public static void main(String[] args) {
		SpringApplication.run(ConsumerApplication.class, args);
	}

}
