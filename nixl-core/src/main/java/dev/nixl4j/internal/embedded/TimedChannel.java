package dev.nixl4j.internal.embedded;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;

/**
 * A blocking socket that remembers when a byte was last read and last written. The
 * listener's watchdog reads those times to close connections that stall, which wakes the
 * thread blocked on them; the data path pays one clock read per system call.
 */
final class TimedChannel implements ByteChannel {

	private final SocketChannel channel;

	private volatile long lastRead = System.nanoTime();

	private volatile long lastWrite = this.lastRead;

	TimedChannel(SocketChannel channel) {
		this.channel = channel;
	}

	SocketChannel socket() {
		return this.channel;
	}

	/**
	 * The {@link System#nanoTime()} of the last read that moved a byte, or of creation.
	 */
	long lastRead() {
		return this.lastRead;
	}

	/**
	 * The {@link System#nanoTime()} of the last write that moved a byte, or of creation.
	 */
	long lastWrite() {
		return this.lastWrite;
	}

	/** The later of {@link #lastRead()} and {@link #lastWrite()}. */
	long lastMoved() {
		return later(this.lastRead, this.lastWrite);
	}

	/**
	 * The later of two {@link System#nanoTime()} readings (compared by difference, as
	 * nanoTime requires).
	 */
	static long later(long a, long b) {
		return (a - b > 0) ? a : b;
	}

	@Override
	public int read(ByteBuffer buffer) throws IOException {
		int read = this.channel.read(buffer);
		if (read > 0) {
			this.lastRead = System.nanoTime();
		}
		return read;
	}

	@Override
	public int write(ByteBuffer buffer) throws IOException {
		int written = this.channel.write(buffer);
		if (written > 0) {
			this.lastWrite = System.nanoTime();
		}
		return written;
	}

	@Override
	public boolean isOpen() {
		return this.channel.isOpen();
	}

	@Override
	public void close() {
		try {
			this.channel.close();
		}
		catch (IOException ex) {
			// closing is all that matters
		}
	}

}
