package dev.nixl4j;

import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * An agent's metadata as NIXL serializes it: its name, the connection information of its
 * backends, and the memory it registered together with the backend keys that grant access
 * to that memory.
 *
 * <p>
 * Treat it as a secret: whoever holds it can read and write the registered memory. It is
 * never printed: {@link #toString()} shows only its size.
 */
public final class AgentMetadata {

	private final byte[] bytes;

	private AgentMetadata(byte[] bytes) {
		this.bytes = bytes;
	}

	/**
	 * Wraps metadata bytes received from a peer (copied).
	 * @param bytes serialized metadata
	 * @return the metadata
	 */
	public static AgentMetadata of(byte[] bytes) {
		return new AgentMetadata(bytes.clone());
	}

	/**
	 * Returns a copy of the serialized bytes, for sending to a peer.
	 * @return the bytes
	 */
	public byte[] toByteArray() {
		return this.bytes.clone();
	}

	/**
	 * Returns the size in bytes.
	 * @return the size
	 */
	public int size() {
		return this.bytes.length;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof AgentMetadata that && Arrays.equals(this.bytes, that.bytes);
	}

	@Override
	public int hashCode() {
		return Arrays.hashCode(this.bytes);
	}

	@Override
	public String toString() {
		return "AgentMetadata[" + this.bytes.length + " bytes]";
	}

}
