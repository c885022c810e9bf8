package dev.nixl4j.kv;

import dev.nixl4j.Engine;

/**
 * A lost confirmation costs a resend on the embedded engine.
 */
class EmbeddedKvConfirmationResendTest extends KvConfirmationResendTests {

	@Override
	protected Engine engine() {
		return Engine.EMBEDDED;
	}

}
