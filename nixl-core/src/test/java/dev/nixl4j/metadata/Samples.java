package dev.nixl4j.metadata;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Real NIXL metadata blobs from {@code src/test/resources/metadata} (see the README there).
 */
final class Samples {

	/** The agent name inside {@code one-dram-1mib.bin}. */
	static final String ONE_DRAM = "one-dram";

	/** The agent name inside {@code utf8-name.bin}. */
	static final String UTF8_NAME = "prefill-worker-\u00e9\u00e8-\u4e2d\u6587-7";

	private Samples() {
	}

	static byte[] oneDram() {
		return read("one-dram-1mib.bin");
	}

	static byte[] read(String file) {
		try (InputStream in = Samples.class.getResourceAsStream("/metadata/" + file)) {
			if (in == null) {
				throw new IllegalStateException("missing test resource metadata/" + file);
			}
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
