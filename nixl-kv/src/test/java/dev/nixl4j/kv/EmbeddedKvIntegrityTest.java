package dev.nixl4j.kv;

import dev.nixl4j.Engine;

/**
 * KV lease integrity on the embedded engine.
 */
class EmbeddedKvIntegrityTest extends KvIntegrityTests {

	@Override
	protected Engine engine() {
		return Engine.EMBEDDED;
	}

}
