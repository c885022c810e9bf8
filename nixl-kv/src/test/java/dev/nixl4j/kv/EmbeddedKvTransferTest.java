package dev.nixl4j.kv;

import dev.nixl4j.Engine;

/**
 * KV block transfers on the embedded engine.
 */
class EmbeddedKvTransferTest extends KvTransferTests {

	@Override
	protected Engine engine() {
		return Engine.EMBEDDED;
	}

}
