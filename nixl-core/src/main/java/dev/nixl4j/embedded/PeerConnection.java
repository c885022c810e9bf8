package dev.nixl4j.embedded;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;

import dev.nixl4j.NixlStatus;
import dev.nixl4j.XferOp;
import dev.nixl4j.embedded.EmbeddedMetadata.RemoteRegion;
import org.jspecify.annotations.Nullable;

/**
 * The initiator's TCP connection to one peer: a sender thread that connects, greets and writes
 * requests in order, and a receiver thread that reads responses, for READs straight into the
 * local segments. When the connection fails, every request on it fails with the reason.
 */
final class PeerConnection {

	private static final System.Logger logger = System.getLogger(PeerConnection.class.getName());

	private static final int BACKEND_ERROR = NixlStatus.ERROR_BACKEND.code();

	private final EmbeddedDriver owner;

	private final RemotePeer peer;

	private final LinkedBlockingQueue<Outgoing> queue = new LinkedBlockingQueue<>();

	private final Map<Long, Request> pending = new ConcurrentHashMap<>();

	private final Thread sender;

	private volatile @Nullable Thread receiver;

	private volatile @Nullable SocketChannel channel;

	private volatile @Nullable String failure;

	PeerConnection(EmbeddedDriver owner, RemotePeer peer) {
		this.owner = owner;
		this.peer = peer;
		this.sender = Thread.ofPlatform()
			.daemon(true)
			.name("nixl-embedded-" + owner.name() + "-send-" + peer.name)
			.start(this::send);
	}

	boolean isDead() {
		return this.failure != null;
	}

	/** Queues a post of a request; its outcome arrives through {@link Request#finish}. */
	void post(Request request, long wireId, byte @Nullable [] notification) {
		this.queue.add(new Post(request, wireId, notification));
		if (this.failure != null) {
			failQueued();
		}
	}

	/** Queues a notification. */
	void notify(byte[] message) {
		this.queue.add(new Notify(message));
		if (this.failure != null) {
			failQueued();
		}
	}

	private void send() {
		try {
			connect();
			while (this.failure == null) {
				Outgoing next = this.queue.take();
				if (next instanceof Post post) {
					sendPost(post);
				}
				else if (next instanceof Notify notify) {
					sendNotify(notify.message());
				}
			}
		}
		catch (IOException ex) {
			fail(describe(ex));
		}
		catch (InterruptedException ex) {
			// closed
		}
		catch (RuntimeException ex) {
			fail("unexpected failure while sending: " + ex);
		}
	}

	private void connect() throws IOException {
		InetSocketAddress address = new InetSocketAddress(this.peer.connection.host(), this.peer.connection.port());
		SocketChannel ch = SocketChannel.open();
		this.channel = ch;
		if (this.failure != null) {
			ch.close();
			return;
		}
		ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
		Wire.tune(ch);
		try {
			ch.socket().connect(address, (int) this.owner.connectTimeout().toMillis());
		}
		catch (IOException ex) {
			throw new IOException("cannot connect to " + address + ": " + ex.getMessage(), ex);
		}
		byte[] name = this.owner.name().getBytes(StandardCharsets.UTF_8);
		ByteBuffer hello = ByteBuffer.allocate(Wire.HELLO_FIXED_BYTES + name.length)
			.putInt(Wire.MAGIC)
			.put(Wire.VERSION)
			.put(this.peer.connection.token())
			.putShort((short) name.length)
			.put(name)
			.flip();
		Wire.writeFully(ch, hello);
		ByteBuffer answer = ByteBuffer.allocate(1);
		Wire.readFully(ch, answer);
		if (answer.get(0) != 0) {
			throw new IOException("the agent at " + address + " refused the connection: its token differs from the "
					+ "metadata loaded here (did it restart? invalidate and load its new metadata)");
		}
		Thread reader = Thread.ofPlatform()
			.daemon(true)
			.name("nixl-embedded-" + this.owner.name() + "-recv-" + this.peer.name)
			.unstarted(this::receive);
		this.receiver = reader;
		reader.start();
	}

	private void sendPost(Post post) throws IOException {
		Request request = post.request();
		byte[] notification = (post.notification() != null) ? post.notification() : new byte[0];
		ByteBuffer header = ByteBuffer.allocate(Wire.REQUEST_HEADER_BYTES
				+ request.remote.size() * Wire.DESCRIPTOR_BYTES + notification.length);
		header.put(request.op == XferOp.READ ? Wire.READ : Wire.WRITE)
			.putLong(post.wireId())
			.putInt(request.remote.size())
			.putInt(request.op == XferOp.READ ? 0 : notification.length);
		for (RemoteRegion region : request.remote) {
			header.putLong(region.descriptor().address())
				.putLong(region.descriptor().length())
				.putLong(region.descriptor().deviceId())
				.putLong(region.registration())
				.put(region.key());
		}
		if (request.op == XferOp.WRITE) {
			header.put(notification);
		}
		header.flip();
		SocketChannel ch = channel();
		if (request.op == XferOp.READ) {
			// a READ's notification goes out once its data has arrived (see receive)
			if (track(request, post.wireId())) {
				Wire.writeFully(ch, header);
			}
			return;
		}
		if (!request.enterIo(post.wireId())) {
			return; // cancelled before it went out
		}
		try {
			if (!track(request, post.wireId())) {
				return;
			}
			Wire.writeFully(ch, header);
			for (MemorySegment segment : request.local) {
				Wire.writeFrom(ch, segment);
			}
		}
		finally {
			request.exitIo();
		}
	}

	/** Records a request as awaiting its response, unless the connection failed meanwhile. */
	private boolean track(Request request, long id) {
		this.pending.put(id, request);
		String failed = this.failure;
		if (failed != null) {
			this.pending.remove(id);
			finish(request, id, BACKEND_ERROR, failed);
			return false;
		}
		return true;
	}

	private void sendNotify(byte[] message) throws IOException {
		ByteBuffer frame = ByteBuffer.allocate(Wire.REQUEST_HEADER_BYTES + message.length)
			.put(Wire.NOTIFY)
			.putLong(0)
			.putInt(0)
			.putInt(message.length)
			.put(message)
			.flip();
		Wire.writeFully(channel(), frame);
	}

	private void receive() {
		SocketChannel ch = channel();
		ByteBuffer header = ByteBuffer.allocate(Wire.RESPONSE_HEADER_BYTES);
		ByteBuffer scratch = ByteBuffer.allocate(64 * 1024);
		try {
			while (this.failure == null) {
				header.clear();
				Wire.readFully(ch, header);
				long id = header.getLong(0);
				int status = header.getInt(8);
				int messageLength = header.getInt(12);
				if (messageLength < 0 || messageLength > Wire.MAX_MESSAGE_BYTES) {
					throw new IOException("protocol error: a response message of " + messageLength + " bytes");
				}
				ByteBuffer message = ByteBuffer.allocate(messageLength);
				Wire.readFully(ch, message);
				Request request = this.pending.remove(id);
				if (request == null) {
					throw new IOException("protocol error: a response to request " + id + ", which was not sent");
				}
				String text = new String(message.array(), StandardCharsets.UTF_8);
				if (status != Request.SUCCESS) {
					finish(request, id, status, "refused by '" + this.peer.name + "': " + text);
				}
				else if (request.op == XferOp.READ) {
					receiveRead(ch, request, id, scratch);
				}
				else {
					finish(request, id, Request.SUCCESS, null);
				}
			}
		}
		catch (IOException ex) {
			fail(describe(ex));
		}
		catch (RuntimeException ex) {
			fail("unexpected failure while receiving: " + ex);
		}
	}

	private void receiveRead(SocketChannel ch, Request request, long id, ByteBuffer scratch) throws IOException {
		byte[] notification;
		if (!request.enterIo(id)) {
			Wire.discard(ch, request.bytes, scratch);
			return;
		}
		try {
			for (MemorySegment segment : request.local) {
				Wire.readInto(ch, segment);
			}
			notification = request.notification;
		}
		catch (IOException ex) {
			// no longer among the pending requests that a failing connection ends
			finish(request, id, BACKEND_ERROR, describe(ex));
			throw ex;
		}
		finally {
			request.exitIo();
		}
		if (notification != null) {
			this.queue.add(new Notify(notification));
		}
		finish(request, id, Request.SUCCESS, null);
	}

	private void finish(Request request, long id, int status, @Nullable String why) {
		if (request.finish(id, status, why)) {
			this.owner.wakeUp();
		}
	}

	private SocketChannel channel() {
		SocketChannel ch = this.channel;
		if (ch == null) {
			throw new IllegalStateException("not connected");
		}
		return ch;
	}

	private String describe(IOException ex) {
		return "connection to '" + this.peer.name + "' at " + this.peer.connection.host() + ":"
				+ this.peer.connection.port() + " failed: " + ex.getMessage();
	}

	/** Fails the connection: every request on it ends with the reason, and new ones go elsewhere. */
	void fail(String why) {
		synchronized (this) {
			if (this.failure != null) {
				return;
			}
			this.failure = why;
		}
		SocketChannel ch = this.channel;
		if (ch != null) {
			try {
				ch.close();
			}
			catch (IOException ex) {
				// closing is all that matters
			}
		}
		if (Thread.currentThread() != this.sender) {
			this.sender.interrupt();
		}
		for (Map.Entry<Long, Request> entry : this.pending.entrySet()) {
			finish(entry.getValue(), entry.getKey(), BACKEND_ERROR, why);
		}
		this.pending.clear();
		failQueued();
		if (!why.startsWith(EmbeddedDriver.CLOSING)) {
			logger.log(Level.DEBUG, why);
		}
	}

	private void failQueued() {
		Outgoing next;
		while ((next = this.queue.poll()) != null) {
			if (next instanceof Post post) {
				finish(post.request(), post.wireId(), BACKEND_ERROR, this.failure);
			}
		}
	}

	/** Fails the connection and waits for its threads to end. */
	void close(String why) {
		fail(why);
		Wire.join(this.sender);
		Thread reader = this.receiver;
		if (reader != null) {
			Wire.join(reader);
		}
	}

	private sealed interface Outgoing permits Post, Notify {
	}

	private record Post(Request request, long wireId, byte @Nullable [] notification) implements Outgoing {
	}

	private record Notify(byte[] message) implements Outgoing {
	}

}
