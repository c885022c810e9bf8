package dev.nixl4j.kv;

import dev.nixl4j.Engine;

/**
 * A consumer's pull that owns its local blocks, on the embedded engine.
 */
class EmbeddedKvPullTest extends KvPullTests {

	@Override
	protected Engine engine() {
		return Engine.EMBEDDED;
	}

}
