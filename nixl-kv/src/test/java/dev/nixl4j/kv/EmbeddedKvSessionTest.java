package dev.nixl4j.kv;

import dev.nixl4j.Engine;

/**
 * The consumer's session with its producers on the embedded engine.
 */
class EmbeddedKvSessionTest extends KvSessionTests {

	@Override
	protected Engine engine() {
		return Engine.EMBEDDED;
	}

}
