package dev.nixl4j.kv;

import dev.nixl4j.Engine;

/**
 * Messages from agents that are not a lease's consumer, on the embedded engine.
 */
class EmbeddedKvForeignMessagesTest extends KvForeignMessagesTests {

	@Override
	protected Engine engine() {
		return Engine.EMBEDDED;
	}

}
