package dev.nixl4j.kv;

import dev.nixl4j.Engine;

/**
 * Leases of a producer restarted under the same name on the embedded engine.
 */
class EmbeddedKvProducerRestartTest extends KvProducerRestartTests {

	@Override
	protected Engine engine() {
		return Engine.EMBEDDED;
	}

}
