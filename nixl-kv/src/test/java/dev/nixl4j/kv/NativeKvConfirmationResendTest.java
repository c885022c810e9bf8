package dev.nixl4j.kv;

import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;

/**
 * A lost confirmation costs a resend on the native engine.
 */
class NativeKvConfirmationResendTest extends KvConfirmationResendTests {

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Override
	protected Engine engine() {
		return Engine.NATIVE;
	}

}
