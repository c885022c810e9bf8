package dev.nixl4j.testsupport;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlException;
import dev.nixl4j.internal.engine.EngineDrivers;
import org.junit.jupiter.api.Assumptions;

/**
 * Gate for tests that need native NIXL. Locally they skip, with the command that installs
 * it; in CI ({@code CI=true}) a missing library fails the test instead.
 */
public final class NativeNixl {

	private NativeNixl() {
	}

	/**
	 * Loads NIXL or skips/fails the calling test.
	 */
	public static void require() {
		try {
			// The default places and environment, as an agent without native settings
			// uses.
			EngineDrivers.requireLoadable(AgentConfig.builder("nixl4j-native-gate").engine(Engine.NATIVE).build());
		}
		catch (NixlException ex) {
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError("native NIXL is required in CI but did not load: " + ex.getMessage(), ex);
			}
			Assumptions.abort(
					"native NIXL is not installed, skipping (install: src/native/fetch-nixl.sh): " + ex.getMessage());
		}
	}

}
