package dev.nixl4j.resilience4j;

import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;

/**
 * Refused KV pulls on native NIXL (UCX backend, DRAM).
 */
class NativeKvPullRefusalTest extends KvPullRefusalTests {

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Override
	Engine engine() {
		return Engine.NATIVE;
	}

}
