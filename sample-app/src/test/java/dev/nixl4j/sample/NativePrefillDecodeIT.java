package dev.nixl4j.sample;

import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;

/**
 * The sample on native NIXL (UCX between the two workers). Skips locally without NIXL,
 * with the install hint; fails in CI.
 */
class NativePrefillDecodeIT extends PrefillDecodeEndToEndTests {

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Override
	String engine() {
		return "native";
	}

}
