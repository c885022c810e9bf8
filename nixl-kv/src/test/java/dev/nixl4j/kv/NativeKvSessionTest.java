package dev.nixl4j.kv;

import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;

/**
 * The consumer's session with its producers on the native engine.
 */
class NativeKvSessionTest extends KvSessionTests {

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Override
	protected Engine engine() {
		return Engine.NATIVE;
	}

}
