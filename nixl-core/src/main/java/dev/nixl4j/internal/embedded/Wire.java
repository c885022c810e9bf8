package dev.nixl4j.internal.embedded;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;

/**
 * The embedded engine's TCP protocol. All numbers are big-endian.
 *
 * <pre>
 * client hello:  magic "NX4J", version (1), token (16), name length (2), initiator name (UTF-8)
 * server hello:  status (1): 0 accepted; anything else refused, then the server closes
 * request:       kind (1), id (8), descriptor count (4), notification length (4),
 *                count x [address (8), length (8), device (8), registration (8), key (16)],
 *                notification bytes, and for a WRITE the data of every descriptor in order
 * response:      id (8), status (4, NIXL's codes), message length (4), message (UTF-8),
 *                and for a successful READ the data of every descriptor in order
 * </pre> A NOTIFY request has no descriptors and gets no response. A LOCAL request (the
 * same-host path, see {@link SameHostPath}) has descriptors and no notification; its
 * successful response carries, in place of data, one location of
 * {@value SameHostPath#LOCATION_BYTES} bytes per descriptor: the memfd's number (4) and
 * inode (8) in the target's process, the registered region's offset in that file (8), its
 * address (8) and length (8). A target whose memory of a LOCAL request is not shareable
 * answers {@link dev.nixl4j.NixlStatus#NOT_SUPPORTED}, and the initiator sends the
 * request again as a READ or WRITE. A request over the limits below is answered with an
 * error and the connection is closed; so is any request after a refused WRITE, whose data
 * the server does not read.
 */
final class Wire {

	static final int MAGIC = 0x4E58344A; // "NX4J"

	static final byte VERSION = 1;

	static final byte READ = 1;

	static final byte WRITE = 2;

	static final byte NOTIFY = 3;

	static final byte LOCAL = 4;

	static final int HELLO_FIXED_BYTES = 4 + 1 + EmbeddedMetadata.SECRET_BYTES + 2;

	static final int REQUEST_HEADER_BYTES = 1 + 8 + 4 + 4;

	static final int DESCRIPTOR_BYTES = 4 * 8 + EmbeddedMetadata.SECRET_BYTES;

	static final int RESPONSE_HEADER_BYTES = 8 + 4 + 4;

	/** Most descriptors in one request. */
	static final int MAX_DESCRIPTORS = 1 << 18;

	/** Longest notification message. */
	static final int MAX_NOTIFICATION_BYTES = 1 << 20;

	/** Longest agent name in a hello. */
	static final int MAX_NAME_BYTES = 4096;

	/** Longest error message in a response. */
	static final int MAX_MESSAGE_BYTES = 4096;

	/**
	 * Largest piece of a segment handed to the socket at once (a ByteBuffer holds at most
	 * 2 GiB).
	 */
	private static final long CHUNK_BYTES = 1L << 30;

	/** How long closing waits for one of the engine's threads to end. */
	private static final long JOIN_MILLIS = 10_000;

	private Wire() {
	}

	/**
	 * Waits (bounded) for one of the engine's threads to end; a thread never waits for
	 * itself.
	 */
	static void join(Thread thread) {
		if (thread == Thread.currentThread()) {
			return;
		}
		try {
			thread.join(JOIN_MILLIS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Socket buffers of 4 MiB: a megabyte-sized block goes out without waiting for the
	 * window to grow.
	 */
	static void tune(java.nio.channels.NetworkChannel channel) throws IOException {
		channel.setOption(java.net.StandardSocketOptions.SO_SNDBUF, 4 << 20);
		channel.setOption(java.net.StandardSocketOptions.SO_RCVBUF, 4 << 20);
	}

	static void readFully(ReadableByteChannel channel, ByteBuffer buffer) throws IOException {
		while (buffer.hasRemaining()) {
			if (channel.read(buffer) < 0) {
				throw new EOFException("the connection was closed by the other side");
			}
		}
	}

	static void writeFully(WritableByteChannel channel, ByteBuffer buffer) throws IOException {
		while (buffer.hasRemaining()) {
			channel.write(buffer);
		}
	}

	/** Receives straight into a segment (no copy through the heap). */
	static void readInto(ReadableByteChannel channel, MemorySegment segment) throws IOException {
		for (long offset = 0; offset < segment.byteSize(); offset += CHUNK_BYTES) {
			readFully(channel,
					segment.asSlice(offset, Math.min(CHUNK_BYTES, segment.byteSize() - offset)).asByteBuffer());
		}
	}

	/** Sends straight from a segment (no copy through the heap). */
	static void writeFrom(WritableByteChannel channel, MemorySegment segment) throws IOException {
		for (long offset = 0; offset < segment.byteSize(); offset += CHUNK_BYTES) {
			writeFully(channel,
					segment.asSlice(offset, Math.min(CHUNK_BYTES, segment.byteSize() - offset)).asByteBuffer());
		}
	}

	/** Reads and drops bytes, for data that belongs to a cancelled request. */
	static void discard(ReadableByteChannel channel, long bytes, ByteBuffer scratch) throws IOException {
		long left = bytes;
		while (left > 0) {
			scratch.clear().limit((int) Math.min(scratch.capacity(), left));
			readFully(channel, scratch);
			left -= scratch.limit();
		}
	}

}
