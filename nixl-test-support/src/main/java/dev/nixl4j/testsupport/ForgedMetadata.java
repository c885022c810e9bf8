package dev.nixl4j.testsupport;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Metadata blobs in NIXL's serialization ({@code nixlSerDes}) with one UCX connection of
 * any connection info and no memory sections, as a hostile registry client would write
 * them.
 */
public final class ForgedMetadata {

	private ForgedMetadata() {
	}

	/**
	 * Metadata of an agent with one UCX connection of the given info and no memory
	 * sections.
	 * @param agent the agent name in the blob
	 * @param connectionInfo the UCX connection info
	 * @return the blob
	 */
	public static byte[] withUcxConnection(String agent, byte[] connectionInfo) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		out.writeBytes("nixlSerDes|".getBytes(StandardCharsets.US_ASCII));
		field(out, "Agent", agent.getBytes(StandardCharsets.UTF_8));
		field(out, "Conns", u64(1));
		field(out, "t", "UCX".getBytes(StandardCharsets.US_ASCII));
		field(out, "c", connectionInfo);
		field(out, "", "MemSection".getBytes(StandardCharsets.US_ASCII));
		field(out, "nixlSecElms", u64(0));
		return out.toByteArray();
	}

	/**
	 * The blob that aborted native workers inside UCX before its connection info was
	 * checked: a one-byte UCX connection info ({@code x}); 145 bytes for a name of 27
	 * bytes.
	 * @param agent the agent name in the blob
	 * @return the blob
	 */
	public static byte[] oneByteUcxConnection(String agent) {
		return withUcxConnection(agent, "x".getBytes(StandardCharsets.US_ASCII));
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
