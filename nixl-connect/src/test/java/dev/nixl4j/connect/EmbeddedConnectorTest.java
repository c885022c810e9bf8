package dev.nixl4j.connect;

import dev.nixl4j.Engine;

/**
 * The connect layer over the embedded engine.
 */
class EmbeddedConnectorTest extends ConnectorContractTests {

	@Override
	protected Engine engine() {
		return Engine.EMBEDDED;
	}

	@Override
	protected boolean deregistrationRevokesAccess() {
		return true;
	}

}
