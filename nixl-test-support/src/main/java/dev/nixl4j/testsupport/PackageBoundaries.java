package dev.nixl4j.testsupport;

import java.util.List;

/**
 * The package boundaries of nixl4j, for the boundary tests of every module: which
 * packages are the public API, and where the implementation lives.
 */
public final class PackageBoundaries {

	/** The packages users may depend on; they depend on no implementation package. */
	public static final List<String> API_PACKAGES = List.of("dev.nixl4j", "dev.nixl4j.metadata",
			"dev.nixl4j.metadata.etcd", "dev.nixl4j.connect", "dev.nixl4j.kv", "dev.nixl4j.readiness",
			"dev.nixl4j.json", "dev.nixl4j.lifecycle", "dev.nixl4j.cuda");

	/**
	 * The implementation packages (and all below): not API, never used outside nixl-core.
	 */
	public static final String INTERNAL = "dev.nixl4j.internal..";

	private PackageBoundaries() {
	}

}
