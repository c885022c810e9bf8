package dev.nixl4j.internal.embedded;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.EmbeddedOptions;

/**
 * The target side of the embedded engine's TCP path. One thread accepts connections and
 * reads their hellos without blocking, so a connection that has not yet presented the
 * token costs no thread; the same thread enforces every deadline (the hello's, each
 * request frame's, and the agent's own connections' response deadline) by closing the
 * connection that missed it. A peer that presented the token is served on a thread of its
 * own ({@link ServedConnection}). The acceptor holds at most
 * {@link EmbeddedOptions#maxConnections()} connections, still saying hello
 * ({@link Greeting}) or served. A peer that breaks the protocol loses its connection;
 * other peers are not affected.
 */
final class ConnectionAcceptor implements Closeable {

	private static final System.Logger logger = System.getLogger(ConnectionAcceptor.class.getName());

	/** What the accepting thread is called in fault reports. */
	static final String THREAD = "embedded listener";

	/** How often the accepting thread checks deadlines when nothing arrives. */
	private static final long TICK_MILLIS = 100;

	/** The shortest accept backlog asked of the system. */
	private static final int MIN_BACKLOG = 128;

	/**
	 * Most connections accepted in one turn, so hellos and deadlines are not starved by a
	 * flood.
	 */
	private static final int ACCEPT_BATCH = 64;

	/**
	 * How long accepting pauses after accept failed (for example out of file
	 * descriptors).
	 */
	private static final long ACCEPT_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

	/** Shortest interval between warnings about refused or timed-out connections. */
	private static final long WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final EmbeddedDriver owner;

	private final byte[] token;

	private final int maxConnections;

	private final Duration helloTimeout;

	private final Duration frameTimeout;

	private final long helloNanos;

	private final ServerSocketChannel server;

	private final Selector selector;

	private final SelectionKey acceptKey;

	private final Thread acceptor;

	/**
	 * Connections still saying hello, oldest first; used by the accepting thread only.
	 */
	private final LinkedHashSet<Greeting> greetings = new LinkedHashSet<>();

	private final Set<ServedConnection> served = ConcurrentHashMap.newKeySet();

	/**
	 * Connections greeted in this turn of the accepting thread and not yet served: they
	 * are in neither set but count against the limit. Accepting thread only.
	 */
	private int handingOver;

	private final AtomicLong refused = new AtomicLong();

	private final AtomicLong timedOut = new AtomicLong();

	/** Hellos refused for a wrong token or a malformed hello; accepting thread only. */
	private long badHellos;

	private volatile ThreadFactory serveThreads;

	/** When accepting resumes after a failed accept, or 0; accepting thread only. */
	private long acceptPausedUntil;

	/** When the last rate-limited warning was logged; accepting thread only. */
	private long lastWarned;

	private long warnedRefused;

	private long warnedTimedOut;

	private long warnedBadHellos;

	private volatile boolean closed;

	ConnectionAcceptor(EmbeddedDriver owner, EmbeddedOptions options, byte[] token) throws IOException {
		this.owner = owner;
		this.token = token;
		this.maxConnections = options.maxConnections();
		this.helloTimeout = options.helloTimeout();
		this.frameTimeout = options.frameTimeout();
		this.helloNanos = options.helloTimeout().toNanos();
		this.serveThreads = Thread.ofPlatform()
			.daemon(true)
			.name("nixl-embedded-" + owner.name() + "-serve-", 1)
			.factory();
		this.server = ServerSocketChannel.open();
		Selector opened = null;
		try {
			// a backlog as deep as the limit, so a burst of connections waits for the
			// accepting thread
			// in the kernel instead of being held half-open there (the system may cap it
			// lower)
			this.server.bind(options.listenAddress(), Math.max(MIN_BACKLOG, this.maxConnections));
			this.server.configureBlocking(false);
			opened = Selector.open();
			this.acceptKey = this.server.register(opened, SelectionKey.OP_ACCEPT);
			this.selector = opened;
			this.acceptor = Thread.ofPlatform()
				.daemon(true)
				.name("nixl-embedded-" + owner.name() + "-accept")
				.start(this::run);
		}
		catch (IOException | RuntimeException | Error ex) {
			this.server.close();
			if (opened != null) {
				opened.close();
			}
			throw ex;
		}
	}

	InetSocketAddress address() {
		try {
			return (InetSocketAddress) this.server.getLocalAddress();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Counts connections from peers that presented the token and are being served now.
	 */
	int servedConnections() {
		return this.served.size();
	}

	/** Counts connections closed at once because the listener held its limit. */
	long refusedConnections() {
		return this.refused.get();
	}

	/** Counts connections closed because they missed the hello or a frame deadline. */
	long timedOutConnections() {
		return this.timedOut.get();
	}

	/** Whether a connection from the named peer is being served now. */
	boolean serves(String peer) {
		for (ServedConnection connection : this.served) {
			if (connection.peer.equals(peer)) {
				return true;
			}
		}
		return false;
	}

	EmbeddedDriver owner() {
		return this.owner;
	}

	Duration frameTimeout() {
		return this.frameTimeout;
	}

	boolean isClosed() {
		return this.closed;
	}

	/** Forgets a served connection that ended. */
	void ended(ServedConnection connection) {
		this.served.remove(connection);
	}

	/** Counts a served connection cut for missing a frame deadline. */
	void countTimedOut() {
		this.timedOut.incrementAndGet();
	}

	/**
	 * Closes the server socket under the accepting thread, as if it broke: a seam for
	 * tests of a fatal fault.
	 */
	void breakServerSocket() throws IOException {
		this.server.close();
	}

	/**
	 * Replaces the factory of serving threads: a seam for tests that make a thread start
	 * fail.
	 */
	void serveThreads(ThreadFactory factory) {
		this.serveThreads = factory;
	}

	private void run() {
		try {
			while (!this.closed) {
				this.selector.select(TICK_MILLIS);
				if (this.closed) {
					return;
				}
				if (!this.acceptKey.isValid()) {
					throw new ClosedChannelException();
				}
				List<Greeting> greeted = null;
				Iterator<SelectionKey> keys = this.selector.selectedKeys().iterator();
				while (keys.hasNext()) {
					SelectionKey key = keys.next();
					keys.remove();
					if (key == this.acceptKey) {
						acceptSome();
					}
					else if (key.attachment() instanceof Greeting greeting && greet(greeting)) {
						if (greeted == null) {
							greeted = new ArrayList<>();
						}
						greeted.add(greeting);
						this.handingOver++;
					}
				}
				if (greeted != null) {
					// the cancelled keys leave the selector here, so the channels can
					// block again
					this.selector.selectNow();
					for (Greeting greeting : greeted) {
						serve(greeting);
					}
					this.handingOver = 0;
				}
				checkDeadlines(System.nanoTime());
			}
		}
		catch (IOException | RuntimeException | Error ex) {
			if (!this.closed) {
				// refuse new peers at once instead of leaving them in the backlog
				try {
					this.server.close();
				}
				catch (IOException closing) {
					ex.addSuppressed(closing);
				}
				this.owner.faults().fatal(THREAD, ex);
			}
		}
	}

	/**
	 * Accepts the connections waiting, up to a batch; the server socket closing is fatal.
	 */
	private void acceptSome() throws ClosedChannelException {
		for (int i = 0; i < ACCEPT_BATCH; i++) {
			SocketChannel channel;
			try {
				channel = this.server.accept();
			}
			catch (ClosedChannelException ex) {
				throw ex;
			}
			catch (IOException ex) {
				// out of file descriptors, for example: pause instead of spinning on the
				// ready socket
				this.acceptKey.interestOps(0);
				this.acceptPausedUntil = System.nanoTime() + ACCEPT_PAUSE_NANOS;
				this.owner.faults().survived(THREAD, ex);
				return;
			}
			if (channel == null) {
				return;
			}
			try {
				admit(channel);
			}
			catch (IOException ex) {
				closeQuietly(channel);
			}
			catch (RuntimeException | Error ex) {
				closeQuietly(channel);
				this.owner.faults().survived(THREAD, ex);
			}
		}
	}

	/**
	 * Takes a new connection unless the listener holds its limit: then the oldest
	 * connection still saying hello makes room, or, when every connection belongs to a
	 * peer that presented the token, the new one is closed at once.
	 */
	private void admit(SocketChannel channel) throws IOException {
		if (this.greetings.size() + this.handingOver + this.served.size() >= this.maxConnections) {
			Iterator<Greeting> oldest = this.greetings.iterator();
			this.refused.incrementAndGet();
			if (!oldest.hasNext()) {
				closeQuietly(channel);
				return;
			}
			Greeting evicted = oldest.next();
			oldest.remove();
			evicted.close();
		}
		channel.configureBlocking(false);
		channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
		Wire.tune(channel);
		Greeting greeting = new Greeting(channel, System.nanoTime());
		greeting.key = channel.register(this.selector, SelectionKey.OP_READ, greeting);
		this.greetings.add(greeting);
	}

	/**
	 * Reads what arrived of a hello and answers it once complete.
	 * @return whether the peer presented the token and is to be served
	 */
	private boolean greet(Greeting greeting) {
		try {
			if (!greeting.read()) {
				return false;
			}
			boolean accepted = MessageDigest.isEqual(this.token, greeting.presented);
			String peer;
			try {
				peer = StandardCharsets.UTF_8.newDecoder().decode(greeting.name.flip()).toString();
			}
			catch (CharacterCodingException ex) {
				drop(greeting);
				return false;
			}
			int written = greeting.channel.write(ByteBuffer.wrap(new byte[] { (byte) (accepted ? 0 : 1) }));
			if (!accepted) {
				this.badHellos++;
				logger.log(Level.DEBUG, () -> "agent '" + this.owner.name() + "' refused a connection claiming to be '"
						+ peer + "': it did not present the token of this agent's metadata");
			}
			if (!accepted || written != 1) {
				drop(greeting);
				return false;
			}
			this.greetings.remove(greeting);
			greeting.unregister();
			greeting.peer = peer;
			return true;
		}
		catch (IOException ex) {
			if (greeting.named || !(ex instanceof EOFException)) {
				this.badHellos++;
			}
			drop(greeting);
			return false;
		}
		catch (RuntimeException | Error ex) {
			drop(greeting);
			this.owner.faults().survived(THREAD, ex);
			return false;
		}
	}

	/**
	 * Hands a greeted connection to a thread of its own; a thread that cannot start costs
	 * only this connection.
	 */
	private void serve(Greeting greeting) {
		ServedConnection connection = null;
		try {
			greeting.channel.configureBlocking(true);
			connection = new ServedConnection(new TimedChannel(greeting.channel), greeting.peer, this);
			this.served.add(connection);
			this.owner.inbox().connectionFrom(connection.peer);
			Thread thread = this.serveThreads.newThread(connection::serve);
			if (thread == null) {
				throw new IllegalStateException("the thread factory made no thread");
			}
			connection.thread = thread;
			thread.start();
		}
		catch (IOException | RuntimeException | Error ex) {
			closeQuietly(greeting.channel);
			if (connection != null) {
				connection.thread = null;
				this.served.remove(connection);
			}
			if (!(ex instanceof IOException)) {
				this.owner.faults().survived(THREAD, ex);
			}
		}
	}

	private void checkDeadlines(long now) {
		try {
			for (Iterator<Greeting> it = this.greetings.iterator(); it.hasNext();) {
				Greeting greeting = it.next();
				if (now - greeting.accepted < this.helloNanos) {
					break;
				}
				it.remove();
				greeting.close();
				this.timedOut.incrementAndGet();
			}
			for (ServedConnection connection : this.served) {
				connection.check(now);
			}
			this.owner.checkDeadlines(now);
			if (this.acceptPausedUntil != 0 && now - this.acceptPausedUntil >= 0) {
				this.acceptPausedUntil = 0;
				this.acceptKey.interestOps(SelectionKey.OP_ACCEPT);
			}
			warnIfDue(now);
		}
		catch (RuntimeException | Error ex) {
			this.owner.faults().survived(THREAD, ex);
		}
	}

	/**
	 * One warning per interval at most, saying how many connections were closed, and why,
	 * since the last.
	 */
	private void warnIfDue(long now) {
		long refusedNow = this.refused.get();
		long timedOutNow = this.timedOut.get();
		long badHellosNow = this.badHellos;
		if ((refusedNow == this.warnedRefused && timedOutNow == this.warnedTimedOut
				&& badHellosNow == this.warnedBadHellos)
				|| (this.lastWarned != 0 && now - this.lastWarned < WARN_INTERVAL_NANOS)) {
			return;
		}
		logger.log(Level.WARNING,
				"agent '" + this.owner.name() + "' closed, since the last such warning, "
						+ (refusedNow - this.warnedRefused) + " connections over its limit of " + this.maxConnections
						+ " (EmbeddedOptions.maxConnections), " + (timedOutNow - this.warnedTimedOut)
						+ " that missed the hello deadline of " + this.helloTimeout + " or a frame deadline of "
						+ this.frameTimeout + ", and " + (badHellosNow - this.warnedBadHellos)
						+ " whose hello was malformed or lacked the token");
		this.lastWarned = now;
		this.warnedRefused = refusedNow;
		this.warnedTimedOut = timedOutNow;
		this.warnedBadHellos = badHellosNow;
	}

	private void drop(Greeting greeting) {
		this.greetings.remove(greeting);
		greeting.close();
	}

	static void closeQuietly(SocketChannel channel) {
		try {
			channel.close();
		}
		catch (IOException ex) {
			// closing is all that matters
		}
	}

	@Override
	public void close() {
		this.closed = true;
		this.selector.wakeup();
		Wire.join(this.acceptor);
		try {
			this.server.close();
		}
		catch (IOException ex) {
			// closing is all that matters
		}
		try {
			this.selector.close();
		}
		catch (IOException ex) {
			// closing is all that matters
		}
		for (Greeting greeting : this.greetings) {
			closeQuietly(greeting.channel);
		}
		this.greetings.clear();
		List<ServedConnection> open = new ArrayList<>(this.served);
		for (ServedConnection connection : open) {
			connection.close();
		}
		for (ServedConnection connection : open) {
			Thread thread = connection.thread;
			if (thread != null) {
				Wire.join(thread);
			}
		}
	}

}
