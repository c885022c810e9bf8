package dev.nixl4j.internal.embedded;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;

import dev.nixl4j.NixlStatus;
import dev.nixl4j.XferOp;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.RemoteRegion;
import org.jspecify.annotations.Nullable;

/**
 * The initiator's TCP connection to one peer: a sender thread that connects, greets and
 * writes requests in order, and a receiver thread that reads responses, for READs
 * straight into the local segments. When the connection fails, every request on it fails
 * with the reason. The listener's watchdog declares the connection dropped when the peer
 * stays silent for {@link dev.nixl4j.EmbeddedOptions#responseTimeout()} while a request
 * is outstanding, so a stopped peer fails its transfers as fast as a dead one.
 */
final class PeerConnection {

	private static final System.Logger logger = System.getLogger(PeerConnection.class.getName());

	private static final int BACKEND_ERROR = NixlStatus.ERROR_BACKEND.code();

	private final EmbeddedDriver owner;

	private final RemotePeer peer;

	private final LinkedBlockingQueue<Outgoing> queue = new LinkedBlockingQueue<>();

	private final Map<Long, Request> pending = new ConcurrentHashMap<>();

	/** Requests sent as {@link Wire#LOCAL} and not yet answered. */
	private final java.util.Set<Long> local = ConcurrentHashMap.newKeySet();

	/**
	 * Requests sent and not yet answered, in the order sent (the peer answers in that
	 * order).
	 */
	private final ConcurrentLinkedQueue<Sent> unanswered = new ConcurrentLinkedQueue<>();

	private final Thread sender;

	private volatile @Nullable Thread receiver;

	private volatile @Nullable TimedChannel channel;

	/** When the hello went out while its answer is awaited, else 0. */
	private volatile long greetingSince;

	/** When the sender began its current write, else 0. */
	private volatile long sendingSince;

	private volatile @Nullable String failure;

	PeerConnection(EmbeddedDriver owner, RemotePeer peer) {
		this.owner = owner;
		this.peer = peer;
		this.sender = Thread.ofPlatform()
			.daemon(true)
			.name("nixl-embedded-" + owner.name() + "-send-" + peer.name)
			.unstarted(this::send);
		try {
			this.sender.start();
		}
		catch (OutOfMemoryError ex) {
			// no thread for this connection: its posts fail, a later post tries a new
			// connection
			fail("no thread could be started for the connection to '" + peer.name + "': " + ex, false);
			owner.faults().survived(thread(), ex);
		}
	}

	private String thread() {
		return "embedded connection to '" + this.peer.name + "'";
	}

	boolean isDead() {
		return this.failure != null;
	}

	/** Queues a post of a request; its outcome arrives through {@link Request#finish}. */
	void post(Request request, long wireId, byte @Nullable [] notification) {
		this.queue.add(new Post(request, wireId, notification, false));
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
			fail(describe(ex), true);
		}
		catch (InterruptedException ex) {
			// closed
		}
		catch (RuntimeException | Error ex) {
			if (fail("connection to '" + this.peer.name + "' failed: unexpected failure while sending: " + ex, false)) {
				this.owner.faults().survived(thread(), ex);
			}
		}
	}

	private void connect() throws IOException {
		InetSocketAddress address = new InetSocketAddress(this.peer.connection.host(), this.peer.connection.port());
		SocketChannel socket = SocketChannel.open();
		TimedChannel ch = new TimedChannel(socket);
		this.channel = ch;
		if (this.failure != null) {
			ch.close();
			return;
		}
		socket.setOption(StandardSocketOptions.TCP_NODELAY, true);
		Wire.tune(socket);
		try {
			socket.socket().connect(address, (int) this.owner.connectTimeout().toMillis());
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
		this.greetingSince = System.nanoTime();
		Wire.writeFully(ch, hello);
		ByteBuffer answer = ByteBuffer.allocate(1);
		Wire.readFully(ch, answer);
		this.greetingSince = 0;
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
		boolean sameHost = !post.tcp() && this.peer.sameHost.takes(request.remote);
		byte[] notification = (post.notification() != null && !sameHost) ? post.notification() : new byte[0];
		ByteBuffer header = ByteBuffer
			.allocate(Wire.REQUEST_HEADER_BYTES + request.remote.size() * Wire.DESCRIPTOR_BYTES + notification.length);
		header.put(sameHost ? Wire.LOCAL : (request.op == XferOp.READ) ? Wire.READ : Wire.WRITE)
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
		TimedChannel ch = channel();
		if (sameHost) {
			// the data moves once the peer accepted the keys (see receiveLocal)
			this.local.add(post.wireId());
			Sent sent = track(request, post.wireId());
			if (sent != null) {
				write(ch, header);
				sent.at = System.nanoTime();
			}
			else {
				this.local.remove(post.wireId());
			}
			return;
		}
		if (request.op == XferOp.READ) {
			// a READ's notification goes out once its data has arrived (see receive)
			Sent sent = track(request, post.wireId());
			if (sent != null) {
				write(ch, header);
				sent.at = System.nanoTime();
			}
			return;
		}
		if (!request.enterIo(post.wireId())) {
			return; // cancelled before it went out
		}
		try {
			Sent sent = track(request, post.wireId());
			if (sent == null) {
				return;
			}
			this.sendingSince = System.nanoTime();
			try {
				Wire.writeFully(ch, header);
				for (MemorySegment segment : request.local) {
					Wire.writeFrom(ch, segment);
				}
			}
			finally {
				this.sendingSince = 0;
			}
			sent.at = System.nanoTime();
		}
		finally {
			request.exitIo();
		}
	}

	/** Writes a frame, timed by the watchdog like the data of a WRITE. */
	private void write(TimedChannel ch, ByteBuffer frame) throws IOException {
		this.sendingSince = System.nanoTime();
		try {
			Wire.writeFully(ch, frame);
		}
		finally {
			this.sendingSince = 0;
		}
	}

	/**
	 * Records a request as awaiting its response, unless the connection failed meanwhile.
	 * @return its entry among the unanswered requests, or {@code null} if it failed at
	 * once
	 */
	private @Nullable Sent track(Request request, long id) {
		this.pending.put(id, request);
		Sent sent = new Sent(id);
		this.unanswered.add(sent);
		String failed = this.failure;
		if (failed != null) {
			this.pending.remove(id);
			this.unanswered.remove(sent);
			finish(request, id, BACKEND_ERROR, failed);
			return null;
		}
		return sent;
	}

	private void sendNotify(byte[] message) throws IOException {
		ByteBuffer frame = ByteBuffer.allocate(Wire.REQUEST_HEADER_BYTES + message.length)
			.put(Wire.NOTIFY)
			.putLong(0)
			.putInt(0)
			.putInt(message.length)
			.put(message)
			.flip();
		write(channel(), frame);
	}

	private void receive() {
		TimedChannel ch = channel();
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
				if (this.local.remove(id)) {
					receiveLocal(ch, request, id, status, text);
					continue;
				}
				if (status != Request.SUCCESS) {
					finish(request, id, status, "refused by '" + this.peer.name + "': " + text);
				}
				else if (request.op == XferOp.READ) {
					receiveRead(ch, request, id, scratch);
				}
				else {
					finish(request, id, Request.SUCCESS, null);
				}
				answered(id);
			}
		}
		catch (IOException ex) {
			fail(describe(ex), true);
		}
		catch (RuntimeException | Error ex) {
			if (fail("connection to '" + this.peer.name + "' failed: unexpected failure while receiving: " + ex,
					false)) {
				this.owner.faults().survived(thread(), ex);
			}
		}
	}

	/**
	 * Forgets an answered request's timing; answers come in the order sent, so it is
	 * almost always the first.
	 */
	private void answered(long id) {
		Sent first = this.unanswered.peek();
		if (first != null && first.id == id) {
			this.unanswered.poll();
		}
		else {
			this.unanswered.removeIf(sent -> sent.id == id);
		}
	}

	private void receiveRead(TimedChannel ch, Request request, long id, ByteBuffer scratch) throws IOException {
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

	/**
	 * Completes a request sent as {@link Wire#LOCAL}: on the peer's consent, copies
	 * through the mapped memory; when the memory is not shareable or cannot be opened,
	 * sends the request again over TCP.
	 */
	private void receiveLocal(TimedChannel ch, Request request, long id, int status, String text) throws IOException {
		if (status == NixlStatus.NOT_SUPPORTED.code()) {
			answered(id);
			this.peer.sameHost.notShareable(request.remote);
			logger.log(Level.DEBUG, () -> "agent '" + this.owner.name() + "': a transfer to '" + this.peer.name
					+ "' goes over TCP: " + text);
			resend(request, id);
			return;
		}
		if (status != Request.SUCCESS) {
			finish(request, id, status, "refused by '" + this.peer.name + "': " + text);
			answered(id);
			return;
		}
		ByteBuffer answer = ByteBuffer.allocate(request.remote.size() * SameHostPath.LOCATION_BYTES);
		Wire.readFully(ch, answer);
		answered(id);
		answer.flip();
		if (!request.enterIo(id)) {
			return;
		}
		byte[] notification;
		try {
			MemorySegment[] remote;
			try {
				remote = this.peer.sameHost.resolve(answer,
						request.remote.stream().map(RemoteRegion::descriptor).toList());
			}
			catch (SameHostPath.NoAccess ex) {
				this.peer.sameHost.turnOff(SameHostPath.Fallback.NO_ACCESS, ex.getMessage());
				logger.log(Level.INFO, "agent '" + this.owner.name() + "' moves data to and from '" + this.peer.name
						+ "' over TCP: " + ex.getMessage());
				resend(request, id);
				return;
			}
			for (int i = 0; i < remote.length; i++) {
				if (request.op == XferOp.READ) {
					MemorySegment.copy(remote[i], 0, request.local.get(i), 0, remote[i].byteSize());
				}
				else {
					MemorySegment.copy(request.local.get(i), 0, remote[i], 0, remote[i].byteSize());
				}
			}
			notification = request.notification;
		}
		finally {
			request.exitIo();
		}
		this.peer.sameHost.transferred();
		if (notification != null) {
			this.queue.add(new Notify(notification));
		}
		finish(request, id, Request.SUCCESS, null);
	}

	/** Sends a request again, over TCP, under the same wire id. */
	private void resend(Request request, long id) {
		this.queue.add(new Post(request, id, request.notification, true));
		if (this.failure != null) {
			failQueued();
		}
	}

	private void finish(Request request, long id, int status, @Nullable String why) {
		if (request.finish(id, status, why)) {
			this.owner.wakeUp();
		}
	}

	private TimedChannel channel() {
		TimedChannel ch = this.channel;
		if (ch == null) {
			throw new IllegalStateException("not connected");
		}
		return ch;
	}

	private String where() {
		return "'" + this.peer.name + "' (" + this.peer.connection.host() + ":" + this.peer.connection.port() + ")";
	}

	private String describe(IOException ex) {
		String failed = (this.receiver != null) ? " dropped: " : " failed: ";
		return "connection to " + where() + failed + ex.getMessage();
	}

	/**
	 * Declares the connection dropped if the peer stayed silent too long: a write that
	 * moved no byte, a hello or a sent request with no answer. Called by the listener's
	 * watchdog.
	 * @param now the present {@link System#nanoTime()}
	 * @param limit the longest silence,
	 * {@link dev.nixl4j.EmbeddedOptions#responseTimeout()}
	 */
	void check(long now, Duration limit) {
		TimedChannel ch = this.channel;
		if (ch == null || this.failure != null) {
			return;
		}
		long nanos = limit.toNanos();
		long sending = this.sendingSince;
		long greeting = this.greetingSince;
		Sent oldest = this.unanswered.peek();
		long sent = (oldest != null) ? oldest.at : 0;
		String silent = null;
		if (sending != 0 && now - TimedChannel.later(sending, ch.lastWrite()) > nanos) {
			silent = "the peer took no byte for " + limit;
		}
		else if (greeting != 0 && now - greeting > nanos) {
			silent = "the peer did not answer the hello within " + limit;
		}
		else if (sent != 0 && now - TimedChannel.later(sent, ch.lastRead()) > nanos) {
			silent = "the peer sent no byte for " + limit + " while a request to it was unanswered";
		}
		if (silent != null) {
			fail("connection to " + where() + " dropped: " + silent
					+ " (stopped, overloaded or unreachable; EmbeddedOptions.responseTimeout)", true);
		}
	}

	/**
	 * Fails the connection: every request on it ends with the reason, and new ones go
	 * elsewhere.
	 * @param why the reason, naming the peer
	 * @param dropped whether the peer or the network ended it (not this agent), so that
	 * waits for the peer's notifications can end too
	 * @return whether this call failed it (it had not failed before)
	 */
	boolean fail(String why, boolean dropped) {
		synchronized (this) {
			if (this.failure != null) {
				return false;
			}
			this.failure = why;
		}
		TimedChannel ch = this.channel;
		if (ch != null) {
			ch.close();
		}
		if (Thread.currentThread() != this.sender) {
			this.sender.interrupt();
		}
		for (Map.Entry<Long, Request> entry : this.pending.entrySet()) {
			finish(entry.getValue(), entry.getKey(), BACKEND_ERROR, why);
		}
		this.pending.clear();
		this.local.clear();
		this.unanswered.clear();
		failQueued();
		if (dropped) {
			this.owner.inbox().linkDropped(this.peer.name, why);
		}
		if (!why.startsWith(EmbeddedDriver.CLOSING)) {
			logger.log(Level.DEBUG, why);
		}
		return true;
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
		fail(why, false);
		Wire.join(this.sender);
		Thread reader = this.receiver;
		if (reader != null) {
			Wire.join(reader);
		}
	}

	/** A request on the wire: when it was completely sent (0 while it is being sent). */
	private static final class Sent {

		final long id;

		volatile long at;

		Sent(long id) {
			this.id = id;
		}

	}

	private sealed interface Outgoing permits Post, Notify {

	}

	private record Post(Request request, long wireId, byte @Nullable [] notification, boolean tcp) implements Outgoing {
	}

	private record Notify(byte[] message) implements Outgoing {
	}

}
