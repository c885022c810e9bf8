package dev.nixl4j.connect;

import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;

/**
 * The connect layer over native NIXL (UCX, DRAM).
 */
class NativeConnectorTest extends ConnectorContractTests {

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Override
	protected Engine engine() {
		return Engine.NATIVE;
	}

	@Override
	protected boolean deregistrationRevokesAccess() {
		return false;
	}

}
