package dev.nixl4j.kv;

import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;

/**
 * Leases of a producer restarted under the same name on the native engine.
 */
class NativeKvProducerRestartTest extends KvProducerRestartTests {

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Override
	protected Engine engine() {
		return Engine.NATIVE;
	}

}
