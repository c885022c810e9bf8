package dev.nixl4j.autoconfigure.actuator;

/**
 * The Actuator application with platform threads.
 */
class NixlActuatorPlatformThreadsTests extends NixlActuatorApplicationTests {

	@Override
	boolean virtualThreads() {
		return false;
	}

}
