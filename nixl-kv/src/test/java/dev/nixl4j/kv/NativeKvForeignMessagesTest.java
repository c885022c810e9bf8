package dev.nixl4j.kv;

import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;

/**
 * Messages from agents that are not a lease's consumer, on the native engine.
 */
class NativeKvForeignMessagesTest extends KvForeignMessagesTests {

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Override
	protected Engine engine() {
		return Engine.NATIVE;
	}

}
