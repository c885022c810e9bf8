package dev.nixl4j.kv;

import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;

/**
 * A consumer's pull that owns its local blocks, on native NIXL (UCX backend, DRAM).
 */
class NativeKvPullTest extends KvPullTests {

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Override
	protected Engine engine() {
		return Engine.NATIVE;
	}

}
