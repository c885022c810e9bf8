package dev.nixl4j.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Real NIXL metadata blobs, from the resources under {@code metadata/} (see the README
 * there).
 */
public final class MetadataSamples {

	/** The agent name inside {@code one-dram-1mib.bin}. */
	public static final String ONE_DRAM = "one-dram";

	/** The agent name inside {@code utf8-name.bin}. */
	public static final String UTF8_NAME = "prefill-worker-\u00e9\u00e8-\u4e2d\u6587-7";

	private MetadataSamples() {
	}

	public static byte[] oneDram() {
		return read("one-dram-1mib.bin");
	}

	public static byte[] read(String file) {
		try (InputStream in = MetadataSamples.class.getResourceAsStream("/metadata/" + file)) {
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
