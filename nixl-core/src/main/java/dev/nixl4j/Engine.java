package dev.nixl4j;

/**
 * Which implementation backs a {@link NixlAgent}.
 */
public enum Engine {

	/**
	 * Native NIXL when the library loads; otherwise {@link #EMBEDDED}, with one warning
	 * that says why native NIXL did not load and how to install it.
	 */
	AUTO,
	/**
	 * NIXL itself through {@code libnixl_capi.so}; fails fast with a clear error when it
	 * cannot load.
	 */
	NATIVE,
	/**
	 * The pure-Java engine: DRAM only, no native code. Agents in one JVM copy between
	 * registered segments; agents in different processes move bytes over TCP. It has
	 * NIXL's semantics, not its transports: no RDMA, no shared-memory transport, no GPU
	 * memory.
	 */
	EMBEDDED

}
