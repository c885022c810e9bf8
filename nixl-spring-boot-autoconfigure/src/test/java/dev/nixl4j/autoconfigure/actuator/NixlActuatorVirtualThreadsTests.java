package dev.nixl4j.autoconfigure.actuator;

import org.springframework.test.context.TestPropertySource;

/**
 * The Actuator application with {@code spring.threads.virtual.enabled=true}: requests and
 * the task executor that issues the transfers run on virtual threads.
 */
@TestPropertySource(properties = "spring.threads.virtual.enabled=true")
class NixlActuatorVirtualThreadsTests extends NixlActuatorApplicationTests {

	@Override
	boolean virtualThreads() {
		return true;
	}

}
