package dev.nixl4j.internal.embedded;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

import org.jspecify.annotations.Nullable;

/**
 * A connection to this agent that has not completed its hello; read without blocking by
 * the accepting thread of {@link ConnectionAcceptor}.
 */
final class Greeting {

	final SocketChannel channel;

	final long accepted;

	final ByteBuffer fixed = ByteBuffer.allocate(Wire.HELLO_FIXED_BYTES);

	@Nullable SelectionKey key;

	byte[] presented = new byte[0];

	ByteBuffer name = ByteBuffer.allocate(0);

	boolean named;

	String peer = "?";

	Greeting(SocketChannel channel, long accepted) {
		this.channel = channel;
		this.accepted = accepted;
	}

	/**
	 * Reads what arrived.
	 * @return whether the hello is complete and well formed
	 * @throws IOException when the connection ended or the hello is malformed
	 */
	boolean read() throws IOException {
		if (!this.named) {
			if (this.channel.read(this.fixed) < 0) {
				throw new EOFException();
			}
			if (this.fixed.hasRemaining()) {
				return false;
			}
			this.fixed.flip();
			int magic = this.fixed.getInt();
			byte version = this.fixed.get();
			this.presented = new byte[EmbeddedMetadata.SECRET_BYTES];
			this.fixed.get(this.presented);
			int nameLength = Short.toUnsignedInt(this.fixed.getShort());
			if (magic != Wire.MAGIC || version != Wire.VERSION || nameLength == 0 || nameLength > Wire.MAX_NAME_BYTES) {
				throw new IOException("not a hello of this protocol");
			}
			this.name = ByteBuffer.allocate(nameLength);
			this.named = true;
		}
		if (this.channel.read(this.name) < 0) {
			throw new EOFException();
		}
		return !this.name.hasRemaining();
	}

	void unregister() {
		SelectionKey registered = this.key;
		if (registered != null) {
			registered.cancel();
		}
	}

	void close() {
		unregister();
		ConnectionAcceptor.closeQuietly(this.channel);
	}

}
