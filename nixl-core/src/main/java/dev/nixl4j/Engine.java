package dev.nixl4j;

/**
 * Which implementation backs a {@link NixlAgent}.
 */
public enum Engine {

	/** Native NIXL when the library loads; otherwise the best engine available in this build. */
	AUTO,
	/** NIXL itself through {@code libnixl_capi.so}; fails fast with a clear error when it cannot load. */
	NATIVE

}
