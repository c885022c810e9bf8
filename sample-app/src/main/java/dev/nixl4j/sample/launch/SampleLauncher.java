package dev.nixl4j.sample.launch;

import java.util.Arrays;

import dev.nixl4j.sample.SampleApplication;
import dev.nixl4j.sample.load.LoadGenerator;

import org.springframework.boot.SpringApplication;

/**
 * The sample jar's entry point: {@code java -jar nixl4j-sample.jar load [options]} runs
 * the load generator, anything else starts a worker ({@link SampleApplication}). Apart
 * from both, so that the workers' package and the load generator's do not depend on each
 * other both ways.
 */
public final class SampleLauncher {

	private SampleLauncher() {
	}

	/**
	 * Starts a worker, or the load generator.
	 * @param args {@code load [options]}, or Spring Boot arguments
	 */
	public static void main(String[] args) {
		if (args.length > 0 && args[0].equals("load")) {
			System.exit(LoadGenerator.run(Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
		}
		SpringApplication.run(SampleApplication.class, args);
	}

}
