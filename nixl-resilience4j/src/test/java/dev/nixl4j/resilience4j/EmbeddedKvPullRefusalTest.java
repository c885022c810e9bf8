package dev.nixl4j.resilience4j;

import dev.nixl4j.Engine;

/**
 * Refused KV pulls on the embedded engine.
 */
class EmbeddedKvPullRefusalTest extends KvPullRefusalTests {

	@Override
	Engine engine() {
		return Engine.EMBEDDED;
	}

}
