package dev.nixl4j.embedded;

import java.io.Closeable;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.embedded.EmbeddedDriver.Access;
import dev.nixl4j.embedded.EmbeddedDriver.AccessDenied;
import dev.nixl4j.embedded.EmbeddedMetadata.RemoteRegion;

/**
 * The target side of the embedded engine's TCP path: accepts peers, checks each one's token,
 * then serves its requests on a thread of its own, moving data straight between the socket and
 * the registered segments. A peer that breaks the protocol loses its connection; other peers
 * are not affected.
 */
final class Listener implements Closeable {

	private static final System.Logger logger = System.getLogger(Listener.class.getName());

	private static final int INVALID_PARAM = NixlStatus.ERROR_INVALID_PARAM.code();

	private final EmbeddedDriver owner;

	private final byte[] token;

	private final ServerSocketChannel server;

	private final Thread acceptor;

	private final Set<Served> served = ConcurrentHashMap.newKeySet();

	private final AtomicInteger connections = new AtomicInteger();

	private volatile boolean closed;

	Listener(EmbeddedDriver owner, InetSocketAddress address, byte[] token) throws IOException {
		this.owner = owner;
		this.token = token;
		this.server = ServerSocketChannel.open();
		try {
			this.server.bind(address, 64);
		}
		catch (IOException ex) {
			this.server.close();
			throw ex;
		}
		this.acceptor = Thread.ofPlatform()
			.daemon(true)
			.name("nixl-embedded-" + owner.name() + "-accept")
			.start(this::accept);
	}

	InetSocketAddress address() {
		try {
			return (InetSocketAddress) this.server.getLocalAddress();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private void accept() {
		while (!this.closed) {
			SocketChannel channel;
			try {
				channel = this.server.accept();
			}
			catch (ClosedChannelException ex) {
				return;
			}
			catch (IOException ex) {
				logger.log(Level.WARNING, "agent '" + this.owner.name() + "' stopped accepting peers: " + ex);
				return;
			}
			Served connection = new Served(channel);
			this.served.add(connection);
			if (this.closed) {
				connection.close();
				return;
			}
			connection.start();
		}
	}

	/** Counts connections from peers being served now. */
	int servedConnections() {
		return this.served.size();
	}

	@Override
	public void close() {
		this.closed = true;
		try {
			this.server.close();
		}
		catch (IOException ex) {
			// closing is all that matters
		}
		Wire.join(this.acceptor);
		List<Served> open = new ArrayList<>(this.served);
		for (Served connection : open) {
			connection.close();
		}
		for (Served connection : open) {
			Wire.join(connection.thread);
		}
	}

	/** One peer's connection and the thread serving it. */
	private final class Served implements Closeable {

		private final SocketChannel channel;

		private final Thread thread;

		private String peer = "?";

		Served(SocketChannel channel) {
			this.channel = channel;
			this.thread = Thread.ofPlatform()
				.daemon(true)
				.name("nixl-embedded-" + Listener.this.owner.name() + "-serve-" + Listener.this.connections.incrementAndGet())
				.unstarted(this::serve);
		}

		void start() {
			this.thread.start();
		}

		private void serve() {
			try {
				this.channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
				Wire.tune(this.channel);
				if (greet()) {
					while (serveOne()) {
						// next request
					}
				}
			}
			catch (IOException ex) {
				if (!Listener.this.closed) {
					logger.log(Level.DEBUG, "connection from '" + this.peer + "' to agent '" + Listener.this.owner.name()
							+ "' ended: " + ex.getMessage());
				}
			}
			catch (RuntimeException ex) {
				logger.log(Level.WARNING, "connection from '" + this.peer + "' to agent '" + Listener.this.owner.name()
						+ "' failed: " + ex);
			}
			finally {
				close();
				Listener.this.served.remove(this);
			}
		}

		private boolean greet() throws IOException {
			ByteBuffer hello = ByteBuffer.allocate(Wire.HELLO_FIXED_BYTES);
			Wire.readFully(this.channel, hello);
			hello.flip();
			int magic = hello.getInt();
			byte version = hello.get();
			byte[] presented = new byte[EmbeddedMetadata.SECRET_BYTES];
			hello.get(presented);
			int nameLength = Short.toUnsignedInt(hello.getShort());
			if (magic != Wire.MAGIC || version != Wire.VERSION || nameLength == 0 || nameLength > Wire.MAX_NAME_BYTES) {
				return false;
			}
			ByteBuffer name = ByteBuffer.allocate(nameLength);
			Wire.readFully(this.channel, name);
			boolean accepted = MessageDigest.isEqual(Listener.this.token, presented);
			Wire.writeFully(this.channel, ByteBuffer.wrap(new byte[] { (byte) (accepted ? 0 : 1) }));
			if (!accepted) {
				logger.log(Level.WARNING, "agent '" + Listener.this.owner.name() + "' refused a connection from "
						+ this.channel.getRemoteAddress() + ": it did not present the token of this agent's metadata");
				return false;
			}
			try {
				this.peer = StandardCharsets.UTF_8.newDecoder().decode(name.flip()).toString();
			}
			catch (CharacterCodingException ex) {
				return false;
			}
			return true;
		}

		/** Serves one request; {@code false} when the connection must end. */
		private boolean serveOne() throws IOException {
			ByteBuffer header = ByteBuffer.allocate(Wire.REQUEST_HEADER_BYTES);
			Wire.readFully(this.channel, header);
			header.flip();
			byte kind = header.get();
			long id = header.getLong();
			int count = header.getInt();
			int notificationLength = header.getInt();
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
				Listener.this.owner.deliver(this.peer, notification.array());
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
				access = Listener.this.owner.access(regions, this);
			}
			catch (AccessDenied denied) {
				respond(id, denied.status(), denied.getMessage());
				// a refused WRITE's data follows on the stream: end the connection instead of reading it
				return kind == Wire.READ;
			}
			try {
				if (kind == Wire.READ) {
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
						Listener.this.owner.deliver(this.peer, notification.array());
					}
					respond(id, 0, "");
				}
			}
			finally {
				access.close();
			}
			return true;
		}

		private static @org.jspecify.annotations.Nullable String checkHeader(byte kind, int count, int notificationLength) {
			if (kind != Wire.READ && kind != Wire.WRITE && kind != Wire.NOTIFY) {
				return "unknown request kind " + kind;
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
			byte[] text = (message.length > Wire.MAX_MESSAGE_BYTES) ? java.util.Arrays.copyOf(message, Wire.MAX_MESSAGE_BYTES)
					: message;
			Wire.writeFully(this.channel, ByteBuffer.allocate(Wire.RESPONSE_HEADER_BYTES + text.length)
				.putLong(id)
				.putInt(status)
				.putInt(text.length)
				.put(text)
				.flip());
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

}
