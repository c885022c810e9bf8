package dev.nixl4j.autoconfigure.diagnostics;

import dev.nixl4j.autoconfigure.NixlAutoConfiguration;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A minimal application with nixl4j's auto-configuration, started by the failure analysis
 * tests in this JVM or in a child JVM ({@link #main}).
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@ImportAutoConfiguration(NixlAutoConfiguration.class)
public class StartupApplication {

	static ConfigurableApplicationContext start(Class<?> configuration, String... args) {
		SpringApplication application = new SpringApplication(configuration);
		application.setWebApplicationType(WebApplicationType.NONE);
		return application.run(args);
	}

	/**
	 * Starts the application; prints {@code STARTED} or exits with status 1 once Spring
	 * Boot reported the failure.
	 * @param args Spring Boot command line arguments
	 */
	public static void main(String[] args) {
		try (ConfigurableApplicationContext context = start(StartupApplication.class, args)) {
			System.out.println("STARTED");
		}
		catch (RuntimeException ex) {
			System.exit(1);
		}
	}

}
