package dev.nixl4j.autoconfigure;

import java.time.Duration;

/**
 * {@link NixlTimeouts} from {@code nixl.transfer.timeout}.
 */
final class PropertiesNixlTimeouts implements NixlTimeouts {

	private final NixlProperties.Transfer properties;

	PropertiesNixlTimeouts(NixlProperties.Transfer properties) {
		this.properties = properties;
	}

	@Override
	public Duration transferTimeout() {
		return this.properties.getTimeout();
	}

	@Override
	public String toString() {
		return "NixlTimeouts(transfer " + transferTimeout() + " from nixl.transfer.timeout)";
	}

}
