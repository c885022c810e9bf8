package dev.nixl4j.readiness;

/**
 * Whether NIXL can move data in this process, and if not, on which level it fails.
 */
public enum Readiness {

	/**
	 * NIXL loads, every configured backend was created, and a loopback transfer between
	 * two agents moved every byte.
	 */
	READY,

	/**
	 * The process cannot use NIXL at all: the JVM denies native access, or the native
	 * library is missing or fails to load. Fixed on the host or the JVM command line.
	 */
	ENVIRONMENT_NOT_READY,

	/**
	 * NIXL loads, but a configured backend is not installed, cannot be loaded or created
	 * here, lacks a memory type that is needed, or cannot move data between two agents.
	 */
	BACKEND_NOT_READY

}
