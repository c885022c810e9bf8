package dev.nixl4j.micrometer;

import io.micrometer.core.instrument.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The labels of the NIXL-named meters, as NIXL's exporter sets them.
 */
class NixlCompatibleTransfersTests {

	@Test
	void theHostnameLabelIsTheLocalHostname() {
		assertThat(new NixlCompatibleTransfers("agent-a", false).tags())
			.contains(Tag.of("hostname", NixlCompatibleTransfers.localHostname()), Tag.of("agent_name", "agent-a"));
	}

}
