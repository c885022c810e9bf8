package dev.nixl4j.internal.embedded;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.RemoteRegion;
import dev.nixl4j.internal.embedded.LocalRegistrations.Access;
import dev.nixl4j.internal.embedded.LocalRegistrations.AccessDenied;
import org.jspecify.annotations.Nullable;

/**
 * One peer's connection to this agent and the thread serving it: reads the peer's
 * requests, checks them ({@link EmbeddedDriver#access}) and moves their data straight
 * between the socket and the registered segments. The accepting thread checks its frame
 * deadline ({@link #check}).
 */
final class ServedConnection implements Closeable {

	private static final System.Logger logger = System.getLogger(ServedConnection.class.getName());

	private static final int INVALID_PARAM = NixlStatus.ERROR_INVALID_PARAM.code();

	private final ConnectionAcceptor acceptor;

	private final EmbeddedDriver owner;

	private final Duration frameTimeout;

	private final long frameNanos;

	private final TimedChannel channel;

	final String peer;

	volatile @Nullable Thread thread;

	private final ByteBuffer header = ByteBuffer.allocate(Wire.REQUEST_HEADER_BYTES);

	/** When the request header being read must be complete, or 0 between requests. */
	private volatile long headerDeadline;

	/**
	 * Whether the data of a request or of its response is moving: then stalls are timed.
	 */
	private volatile boolean streaming;

	private volatile @Nullable String cut;

	ServedConnection(TimedChannel channel, String peer, ConnectionAcceptor acceptor) {
		this.channel = channel;
		this.peer = peer;
		this.acceptor = acceptor;
		this.owner = acceptor.owner();
		this.frameTimeout = acceptor.frameTimeout();
		this.frameNanos = this.frameTimeout.toNanos();
	}

	void serve() {
		try {
			while (serveOne()) {
				// next request
			}
		}
		catch (IOException ex) {
			if (!this.acceptor.isClosed()) {
				String why = this.cut;
				logger.log(Level.DEBUG, () -> "connection from '" + this.peer + "' to agent '" + this.owner.name()
						+ "' ended: " + ((why != null) ? why : ex.getMessage()));
			}
		}
		catch (RuntimeException | Error ex) {
			if (!this.acceptor.isClosed()) {
				this.owner.faults().survived("embedded connection from '" + this.peer + "'", ex);
			}
		}
		finally {
			close();
			this.acceptor.ended(this);
			this.owner.inbox().inboundEnded(this.peer);
		}
	}

	/**
	 * Closes the connection if it missed its frame deadline; called by the accepting
	 * thread.
	 */
	void check(long now) {
		if (this.streaming) {
			if (now - this.channel.lastMoved() > this.frameNanos) {
				cut("its data stalled for " + this.frameTimeout + " (EmbeddedOptions.frameTimeout)");
			}
			return;
		}
		long deadline = this.headerDeadline;
		if (deadline != 0 && now - deadline > 0) {
			cut("a request header was not complete " + this.frameTimeout
					+ " after its first byte (EmbeddedOptions.frameTimeout)");
		}
	}

	private void cut(String why) {
		if (this.cut == null && this.channel.isOpen()) {
			this.cut = why;
			this.acceptor.countTimedOut();
			close();
		}
	}

	/** Serves one request; {@code false} when the connection must end. */
	private boolean serveOne() throws IOException {
		ByteBuffer head = this.header.clear();
		// between requests a peer may stay silent; a request's deadline starts with
		// its first byte
		while (head.position() == 0) {
			if (this.channel.read(head) < 0) {
				throw new EOFException("the connection was closed by the other side");
			}
		}
		this.headerDeadline = System.nanoTime() + this.frameNanos;
		try {
			return serveFrame(head);
		}
		finally {
			this.headerDeadline = 0;
			this.streaming = false;
		}
	}

	private boolean serveFrame(ByteBuffer head) throws IOException {
		Wire.readFully(this.channel, head);
		head.flip();
		byte kind = head.get();
		long id = head.getLong();
		int count = head.getInt();
		int notificationLength = head.getInt();
		String problem = checkHeader(kind, count, notificationLength);
		if (problem != null) {
			respond(id, INVALID_PARAM, problem);
			return false;
		}
		ByteBuffer descriptors = ByteBuffer.allocate(count * Wire.DESCRIPTOR_BYTES);
		Wire.readFully(this.channel, descriptors);
		ByteBuffer notification = ByteBuffer.allocate(notificationLength);
		Wire.readFully(this.channel, notification);
		if (kind == Wire.NOTIFY) {
			this.owner.inbox().deliverFromNetwork(this.peer, notification.array(), this.channel::isOpen);
			return true;
		}
		List<RemoteRegion> regions = new ArrayList<>(count);
		descriptors.flip();
		for (int i = 0; i < count; i++) {
			long address = descriptors.getLong();
			long length = descriptors.getLong();
			long device = descriptors.getLong();
			long registration = descriptors.getLong();
			byte[] key = new byte[EmbeddedMetadata.SECRET_BYTES];
			descriptors.get(key);
			MemoryDescriptor range;
			try {
				range = new MemoryDescriptor(address, length, device);
			}
			catch (IllegalArgumentException ex) {
				respond(id, INVALID_PARAM, "descriptor " + i + " is not a valid memory range: " + ex.getMessage());
				return false;
			}
			regions.add(new RemoteRegion(range, registration, key));
		}
		Access access;
		try {
			access = this.owner.registrations().access(regions, this);
		}
		catch (AccessDenied denied) {
			respond(id, denied.status(), denied.getMessage());
			// a refused WRITE's data follows on the stream: end the connection
			// instead of reading it
			return kind != Wire.WRITE;
		}
		this.streaming = true;
		try {
			if (kind == Wire.LOCAL) {
				byte[] locations = this.owner.sameHostLocations(regions);
				if (locations == null) {
					respond(id, NixlStatus.NOT_SUPPORTED.code(),
							"the memory is not shareable with same-host peers (ShareableMemory), or this agent "
									+ "does not offer the same-host path");
				}
				else {
					respondHeader(id, 0, new byte[0]);
					Wire.writeFully(this.channel, ByteBuffer.wrap(locations));
				}
			}
			else if (kind == Wire.READ) {
				respondHeader(id, 0, new byte[0]);
				for (var segment : access.segments()) {
					Wire.writeFrom(this.channel, segment);
				}
			}
			else {
				for (var segment : access.segments()) {
					Wire.readInto(this.channel, segment);
				}
				if (notificationLength > 0) {
					this.owner.inbox().deliverFromNetwork(this.peer, notification.array(), this.channel::isOpen);
				}
				respond(id, 0, "");
			}
		}
		finally {
			access.close();
		}
		return true;
	}

	private static @Nullable String checkHeader(byte kind, int count, int notificationLength) {
		if (kind != Wire.READ && kind != Wire.WRITE && kind != Wire.NOTIFY && kind != Wire.LOCAL) {
			return "unknown request kind " + kind;
		}
		if (kind == Wire.LOCAL && notificationLength != 0) {
			return "a LOCAL request carries no notification";
		}
		int minimum = (kind == Wire.NOTIFY) ? 0 : 1;
		int maximum = (kind == Wire.NOTIFY) ? 0 : Wire.MAX_DESCRIPTORS;
		if (count < minimum || count > maximum) {
			return "descriptor count " + count + " is outside " + minimum + ".." + maximum;
		}
		if (notificationLength < 0 || notificationLength > Wire.MAX_NOTIFICATION_BYTES) {
			return "notification length " + notificationLength + " is outside 0.." + Wire.MAX_NOTIFICATION_BYTES;
		}
		return null;
	}

	private void respond(long id, int status, String message) throws IOException {
		respondHeader(id, status, message.getBytes(StandardCharsets.UTF_8));
	}

	private void respondHeader(long id, int status, byte[] message) throws IOException {
		byte[] text = (message.length > Wire.MAX_MESSAGE_BYTES)
				? java.util.Arrays.copyOf(message, Wire.MAX_MESSAGE_BYTES) : message;
		Wire.writeFully(this.channel,
				ByteBuffer.allocate(Wire.RESPONSE_HEADER_BYTES + text.length)
					.putLong(id)
					.putInt(status)
					.putInt(text.length)
					.put(text)
					.flip());
	}

	@Override
	public void close() {
		this.channel.close();
	}

}
