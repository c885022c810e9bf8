package dev.nixl4j.cli;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Random;

/**
 * The metadata {@code registry-bench} publishes for its agents: NIXL's serialization
 * ({@code nixlSerDes}) with the agent's name and one connection of a backend NIXL does
 * not have, whose connection info is random bytes that pad the blob to the size asked
 * for, so that the registries check, store and serve it as they would a real agent's
 * metadata (they check the framing and the name, and treat other backends' connection
 * info as opaque). No agent ever loads it.
 */
final class RegistryBenchMetadata {

	/** The backend name in the blob: none of NIXL's, so nothing reads its bytes. */
	private static final String BACKEND = "NIXL4J-BENCH";

	private RegistryBenchMetadata() {
	}

	/**
	 * Returns the size of the blob of an agent without padding: the least a blob of that
	 * name can have.
	 * @param agentName the agent
	 * @return bytes
	 */
	static int overhead(String agentName) {
		return blob(agentName, new byte[1]).length - 1;
	}

	/**
	 * Makes the blob of an agent, of exactly {@code size} bytes, its padding drawn from a
	 * random generator seeded by the name, so that every agent's blob differs.
	 * @param agentName the agent
	 * @param size the size, more than {@link #overhead(String)}
	 * @return the blob
	 * @throws IllegalArgumentException when the size is too small for the name
	 */
	static byte[] of(String agentName, int size) {
		int padding = size - overhead(agentName);
		if (padding < 1) {
			throw new IllegalArgumentException("metadata of agent '" + agentName + "' needs more than "
					+ overhead(agentName) + " bytes, " + size + " asked for");
		}
		byte[] info = new byte[padding];
		new Random(agentName.hashCode()).nextBytes(info);
		return blob(agentName, info);
	}

	private static byte[] blob(String agentName, byte[] connectionInfo) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		out.writeBytes("nixlSerDes|".getBytes(StandardCharsets.US_ASCII));
		field(out, "Agent", agentName.getBytes(StandardCharsets.UTF_8));
		field(out, "Conns", u64(1));
		field(out, "t", BACKEND.getBytes(StandardCharsets.US_ASCII));
		field(out, "c", connectionInfo);
		field(out, "", "MemSection".getBytes(StandardCharsets.US_ASCII));
		field(out, "nixlSecElms", u64(0));
		return out.toByteArray();
	}

	private static void field(ByteArrayOutputStream out, String tag, byte[] value) {
		out.writeBytes(tag.getBytes(StandardCharsets.US_ASCII));
		out.writeBytes(u64(value.length));
		out.writeBytes(value);
		out.write('|');
	}

	private static byte[] u64(long value) {
		return ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
	}

}
