package dev.nixl4j.metadata.http;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataValues;
import org.jspecify.annotations.Nullable;

/**
 * A small HTTP/1.1 metadata server on a plain server socket, for applications without a
 * web framework: it serves the registry {@link HttpMetadataExchange} talks to, from a
 * backing {@link MetadataExchange} or from its own {@link InMemoryMetadataExchange}.
 *
 * <p>
 * Requests are answered by a {@link MetadataRegistryHandler}, which owns every rule of
 * the protocol (bearer tokens, owners, expiry, bounds, status codes), described in
 * docs/architecture.md, "The HTTP metadata registry". Bodies, tokens and owner secrets
 * are never logged.
 *
 * <p>
 * Everything a client controls is bounded in time and number, so that clients which
 * connect and go quiet, or trickle their bytes, cannot keep honest requests from being
 * served: a request's line and headers must arrive within
 * {@link Builder#requestHeaderTimeout(Duration) the header timeout} (counted from the
 * accept for a connection's first request, else from the request's first byte), its body
 * within {@link Builder#requestBodyTimeout(Duration) the body timeout} and, after its
 * first second, at {@link Builder#minBodyRate(long) the minimum rate}, the answer must be
 * taken within {@link Builder#responseTimeout(Duration) the response timeout}, and a
 * connection waits at most {@link Builder#idleTimeout(Duration) the idle timeout} for its
 * next request. Every read waits only for the time left until its deadline, so each byte
 * that arrives does not start the wait again. A connection that misses a deadline is
 * closed without an answer. Bodies are read without holding one of the
 * {@link Builder#threads(int)} permits, so slow bodies do not hold back other requests.
 *
 * <p>
 * At most {@link Builder#maxConnections(int)} connections are open at once. At the cap, a
 * new connection is admitted by closing another: among the connections not being answered
 * at that moment, one of the address that holds the most connections (the newcomer
 * counted), the one that has waited longest since it was accepted or last completed a
 * request. A client that holds many connections and reconnects at once therefore only
 * displaces its own (or, on one address, the oldest ones), while a fresh connection that
 * sends its request at once is answered. There is no cap per address, so clients behind
 * one address (loopback, a NAT) are never locked out. Only when every connection is being
 * answered is the new one closed at accept. Each connection has a virtual thread. None of
 * this touches the JDK's global {@code sun.net.httpserver.*} settings.
 *
 * <p>
 * It binds the loopback address by default. Closing it stops the listener, closes every
 * connection and ends its threads.
 */
public final class MetadataHttpServer implements AutoCloseable {

	/** The default time from a request's start to the end of its headers. */
	public static final Duration DEFAULT_REQUEST_HEADER_TIMEOUT = Duration.ofSeconds(10);

	/** The default time from the end of a request's headers to the end of its body. */
	public static final Duration DEFAULT_REQUEST_BODY_TIMEOUT = Duration.ofSeconds(30);

	/** The default time a client has to take an answer. */
	public static final Duration DEFAULT_RESPONSE_TIMEOUT = Duration.ofSeconds(30);

	/** The default time a connection waits for its next request. */
	public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);

	/** The default cap on open connections. */
	public static final int DEFAULT_MAX_CONNECTIONS = 128;

	/** The default minimum rate of a request body, in bytes per second: 16 KiB/s. */
	public static final long DEFAULT_MIN_BODY_RATE = 16 << 10;

	private static final System.Logger logger = System.getLogger(MetadataHttpServer.class.getName());

	private static final AtomicInteger servers = new AtomicInteger();

	/** The longest the acceptor waits at the cap for a newcomer's thread to begin. */
	private static final long START_WAIT_MILLIS = 100;

	private final ServerSocket serverSocket;

	private final Thread acceptor;

	private final ScheduledThreadPoolExecutor deadlines;

	private final Set<Thread> deadlineThreads = ConcurrentHashMap.newKeySet();

	/** The open connections, in the order they were accepted; guarded by itself. */
	private final Map<Socket, Tracked> connections = new LinkedHashMap<>();

	/** How many open connections each client address holds; guarded by connections. */
	private final Map<InetAddress, Integer> connectionsByAddress = new HashMap<>();

	private final Set<Thread> connectionThreads = ConcurrentHashMap.newKeySet();

	private final AtomicLong refusedConnections = new AtomicLong();

	private final AtomicLong evictedConnections = new AtomicLong();

	private final int maxConnections;

	private final Limits limits;

	private final Semaphore handling;

	private final String name;

	private volatile boolean closed;

	private final MetadataExchange store;

	private final boolean ownsStore;

	private final String basePath;

	private final MetadataRegistryHandler handler;

	private MetadataHttpServer(Builder builder, MetadataRegistryHandler handler, MetadataExchange store,
			boolean ownsStore) throws IOException {
		this.basePath = builder.basePath;
		this.ownsStore = ownsStore;
		this.store = store;
		this.handler = handler;
		this.limits = new Limits(builder.requestHeaderTimeout.toNanos(), builder.requestBodyTimeout.toNanos(),
				builder.responseTimeout.toNanos(), builder.idleTimeout.toNanos(), builder.minBodyRate);
		this.maxConnections = builder.maxConnections;
		this.handling = new Semaphore(builder.threads);
		this.name = "nixl4j-metadata-http-" + servers.incrementAndGet();
		this.deadlines = new ScheduledThreadPoolExecutor(1, runnable -> {
			Thread thread = new Thread(runnable, this.name + "-deadlines");
			thread.setDaemon(true);
			this.deadlineThreads.add(thread);
			return thread;
		});
		this.deadlines.setRemoveOnCancelPolicy(true);
		long sweep = this.handler.sweepInterval().toNanos();
		this.deadlines.scheduleWithFixedDelay(this.handler::expireDue, sweep, sweep, TimeUnit.NANOSECONDS);
		ServerSocket socket = new ServerSocket();
		try {
			socket.setReuseAddress(true);
			// room in the accept queue for a flood's connections beside honest ones: each
			// accept past the cap closes one
			socket.bind(new InetSocketAddress(builder.address, builder.port),
					Math.max(1024, 2 * builder.maxConnections));
		}
		catch (IOException ex) {
			socket.close();
			this.deadlines.shutdownNow();
			throw ex;
		}
		this.serverSocket = socket;
		this.acceptor = new Thread(this::accept, this.name + "-acceptor");
		this.acceptor.setDaemon(true);
		this.acceptor.start();
	}

	/**
	 * Starts building a server.
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Returns the bound address, with the port the system chose when port 0 was asked
	 * for.
	 * @return the address
	 */
	public InetSocketAddress address() {
		return (InetSocketAddress) this.serverSocket.getLocalSocketAddress();
	}

	/**
	 * Returns the bound port.
	 * @return the port
	 */
	public int port() {
		return address().getPort();
	}

	/**
	 * Returns the base URI clients use, for example {@code http://127.0.0.1:41234/nixl}.
	 * @return the base URI
	 */
	public URI baseUri() {
		InetSocketAddress address = address();
		String host = address.getAddress().getHostAddress();
		if (host.indexOf(':') >= 0) {
			host = "[" + host + "]";
		}
		return URI.create("http://" + host + ":" + address.getPort() + this.basePath);
	}

	/**
	 * Returns how many connections were closed at once because
	 * {@link Builder#maxConnections(int) the cap} was reached and every open connection
	 * was being answered.
	 * @return the number of refused connections since the start
	 */
	public long refusedConnections() {
		return this.refusedConnections.get();
	}

	/**
	 * Returns how many open connections were closed to admit a new one at
	 * {@link Builder#maxConnections(int) the cap}.
	 * @return the number of connections closed for newcomers since the start
	 */
	public long evictedConnections() {
		return this.evictedConnections.get();
	}

	/**
	 * Returns how many connections are open now.
	 * @return the number of open connections
	 */
	public int openConnections() {
		synchronized (this.connections) {
			return this.connections.size();
		}
	}

	/**
	 * Stops the server: the listener and every open connection are closed, the server's
	 * threads end, and the in-memory store (when the server made its own) is dropped. A
	 * backing exchange stays open.
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		closeQuietly(this.serverSocket);
		try {
			this.acceptor.join(Duration.ofSeconds(5));
			List<Socket> open;
			synchronized (this.connections) {
				open = new ArrayList<>(this.connections.keySet());
			}
			for (Socket connection : open) {
				closeQuietly(connection);
			}
			for (Thread thread : this.connectionThreads) {
				thread.join(Duration.ofSeconds(5));
			}
			this.deadlines.shutdownNow();
			this.deadlines.awaitTermination(5, TimeUnit.SECONDS);
			// a terminated pool's last thread may still be on its way out
			for (Thread thread : this.deadlineThreads) {
				thread.join(Duration.ofSeconds(1));
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		if (this.ownsStore) {
			this.store.close();
		}
	}

	@Override
	public String toString() {
		return "MetadataHttpServer[" + baseUri() + "]";
	}

	private void accept() {
		AtomicInteger count = new AtomicInteger();
		while (!this.closed) {
			Socket socket;
			try {
				socket = this.serverSocket.accept();
			}
			catch (IOException ex) {
				if (!this.closed) {
					logger.log(System.Logger.Level.WARNING, "The metadata server stopped accepting: " + ex);
				}
				return;
			}
			Tracked connection = new Tracked(socket);
			Tracked evicted = null;
			boolean admitted = false;
			synchronized (this.connections) {
				if (!this.closed) {
					if (this.connections.size() >= this.maxConnections) {
						evicted = victim(connection.address);
						if (evicted != null) {
							untrack(evicted);
						}
					}
					if (this.connections.size() < this.maxConnections) {
						track(connection);
						admitted = true;
					}
				}
			}
			if (evicted != null) {
				closeQuietly(evicted.socket);
				if (this.evictedConnections.getAndIncrement() == 0) {
					logger.log(System.Logger.Level.WARNING,
							"The metadata server holds its maximum of " + this.maxConnections
									+ " connections; each new one closes the connection that waited "
									+ "longest without completing a request, of the address that holds the most");
				}
			}
			if (!admitted) {
				if (!this.closed && this.refusedConnections.getAndIncrement() == 0) {
					logger.log(System.Logger.Level.WARNING,
							"The metadata server holds its maximum of " + this.maxConnections
									+ " connections, all being answered, and closes new ones " + "until some end");
				}
				closeQuietly(socket);
				continue;
			}
			Thread thread = Thread.ofVirtual()
				.name(this.name + "-connection-" + count.incrementAndGet())
				.unstarted(() -> serve(connection));
			this.connectionThreads.add(thread);
			thread.start();
			if (evicted != null) {
				// at the cap, connections are let in no faster than their threads start:
				// a flood that reconnects at once then cannot close a newcomer before its
				// thread reads the request it sent
				connection.awaitStart();
			}
		}
	}

	/**
	 * The connection to close for a newcomer from {@code address}: of the connections not
	 * being answered, one of the address that holds the most (the newcomer counted), and
	 * of those the one that waited longest since it was accepted or last completed a
	 * request; {@code null} when every connection is being answered. A connection whose
	 * thread has not started yet while its client's bytes wait in the socket is closed
	 * only when no other can be, so that a fresh connection that sent its request at once
	 * is not closed before its thread gets to read it. Called holding the connections'
	 * monitor.
	 */
	private @Nullable Tracked victim(InetAddress address) {
		Tracked victim = null;
		boolean victimWaiting = false;
		int victimWeight = 0;
		for (Tracked candidate : this.connections.values()) {
			if (candidate.busy) {
				continue;
			}
			int weight = this.connectionsByAddress.getOrDefault(candidate.address, 0)
					+ (candidate.address.equals(address) ? 1 : 0);
			boolean better = victim == null || weight > victimWeight
					|| (weight == victimWeight && candidate.progressAt - victim.progressAt < 0);
			if (victim != null && !victimWaiting && !better) {
				continue;
			}
			// only asked of the candidates that would be chosen otherwise
			boolean waiting = !candidate.started && candidate.hasUnreadBytes();
			if (victim == null || (victimWaiting && !waiting) || (victimWaiting == waiting && better)) {
				victim = candidate;
				victimWaiting = waiting;
				victimWeight = weight;
			}
		}
		return victim;
	}

	private void track(Tracked connection) {
		this.connections.put(connection.socket, connection);
		this.connectionsByAddress.merge(connection.address, 1, Integer::sum);
	}

	private void untrack(Tracked connection) {
		if (this.connections.remove(connection.socket) != null) {
			this.connectionsByAddress.computeIfPresent(connection.address,
					(address, held) -> (held > 1) ? held - 1 : null);
		}
	}

	private void serve(Tracked connection) {
		try {
			if (!this.closed) {
				new MetadataHttpConnection(connection, this.handler, this.limits, this.handling, this.deadlines).run();
			}
		}
		catch (IOException ex) {
			logger.log(System.Logger.Level.DEBUG, "A metadata connection failed to start: " + ex);
		}
		finally {
			closeQuietly(connection.socket);
			synchronized (this.connections) {
				untrack(connection);
			}
			this.connectionThreads.remove(Thread.currentThread());
		}
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// closing is all that was asked
		}
	}

	/**
	 * The deadlines of a connection, in nanoseconds, and the minimum rate of a body in
	 * bytes per second (0: none).
	 */
	record Limits(long headerTimeoutNanos, long bodyTimeoutNanos, long responseTimeoutNanos, long idleTimeoutNanos,
			long minBodyBytesPerSecond) {
	}

	/**
	 * An open connection, as the acceptor sees it: whether it is being answered now (then
	 * it is not closed for a newcomer), and when it was accepted or last completed a
	 * request.
	 */
	static final class Tracked {

		final Socket socket;

		final InetAddress address;

		volatile boolean busy;

		/** Whether the connection's thread began reading. */
		volatile boolean started;

		private final CountDownLatch start = new CountDownLatch(1);

		volatile long progressAt = System.nanoTime();

		Tracked(Socket socket) {
			this.socket = socket;
			this.address = socket.getInetAddress();
		}

		/**
		 * Whether bytes the client sent wait in the socket, not yet read by the
		 * connection's thread.
		 */
		boolean hasUnreadBytes() {
			try {
				return this.socket.getInputStream().available() > 0;
			}
			catch (IOException ex) {
				return false;
			}
		}

		/** The connection's thread began. */
		void started() {
			this.started = true;
			this.start.countDown();
		}

		/** Waits a little for the connection's thread to begin. */
		void awaitStart() {
			try {
				this.start.await(START_WAIT_MILLIS, TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

		/** The connection completed a request and waits for the next one. */
		void progressed() {
			this.progressAt = System.nanoTime();
			this.busy = false;
		}

	}

	/**
	 * Builds and starts a {@link MetadataHttpServer}.
	 */
	public static final class Builder {

		private @Nullable String token;

		private InetAddress address = InetAddress.getLoopbackAddress();

		private int port;

		private String basePath = MetadataRegistryHandler.DEFAULT_BASE_PATH;

		private @Nullable MetadataExchange store;

		private int maxBytes = MetadataValues.DEFAULT_MAX_BYTES;

		private int threads = 2;

		private int maxEntries = MetadataRegistryHandler.DEFAULT_MAX_ENTRIES;

		private long maxTotalBytes = MetadataRegistryHandler.DEFAULT_MAX_TOTAL_BYTES;

		private Duration entryTtl = MetadataRegistryHandler.DEFAULT_ENTRY_TTL;

		private Duration requestHeaderTimeout = DEFAULT_REQUEST_HEADER_TIMEOUT;

		private Duration requestBodyTimeout = DEFAULT_REQUEST_BODY_TIMEOUT;

		private Duration responseTimeout = DEFAULT_RESPONSE_TIMEOUT;

		private Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;

		private int maxConnections = DEFAULT_MAX_CONNECTIONS;

		private long minBodyRate = DEFAULT_MIN_BODY_RATE;

		private final MetadataRegistryHandler.Builder registry = MetadataRegistryHandler.builder();

		private boolean clients;

		private Builder() {
		}

		/**
		 * Sets the shared bearer token (required unless {@linkplain #client clients} are
		 * set): its holders may publish any free name, together within the shared token's
		 * quota.
		 * @param token the token
		 * @return this builder
		 * @see MetadataRegistryHandler.Builder#token(String)
		 */
		public Builder token(String token) {
			this.token = token;
			return this;
		}

		/**
		 * Sets the quota of the shared token (by default the registry's bounds without
		 * clients, a client's default quota with them).
		 * @param maxEntries the most entries
		 * @param maxTotalBytes the most bytes of metadata and documents
		 * @return this builder
		 * @throws IllegalArgumentException when a bound is not positive
		 * @see MetadataRegistryHandler.Builder#sharedTokenQuota(int, long)
		 */
		public Builder sharedTokenQuota(int maxEntries, long maxTotalBytes) {
			this.registry.sharedTokenQuota(maxEntries, maxTotalBytes);
			return this;
		}

		/**
		 * Grants a client its own token, agent-name prefixes and quota.
		 * @param clientId the client's name, shown in refusals and logs
		 * @param token the client's bearer token; never shown
		 * @param agentNamePrefixes the prefixes of the agent names it may publish
		 * @param maxEntries the most entries it may hold
		 * @param maxTotalBytes the most bytes its entries may hold
		 * @return this builder
		 * @throws IllegalArgumentException as
		 * {@link MetadataRegistryHandler.Builder#client(String, String, Collection, int, long)}
		 */
		public Builder client(String clientId, String token, Collection<String> agentNamePrefixes, int maxEntries,
				long maxTotalBytes) {
			this.registry.client(clientId, token, agentNamePrefixes, maxEntries, maxTotalBytes);
			this.clients = true;
			return this;
		}

		/**
		 * Grants a client its own token and agent-name prefixes, with the default quota.
		 * @param clientId the client's name
		 * @param token the client's bearer token
		 * @param agentNamePrefixes the prefixes of the agent names it may publish
		 * @return this builder
		 * @see MetadataRegistryHandler.Builder#client(String, String, Collection)
		 */
		public Builder client(String clientId, String token, Collection<String> agentNamePrefixes) {
			return client(clientId, token, agentNamePrefixes, MetadataRegistryHandler.DEFAULT_CLIENT_MAX_ENTRIES,
					MetadataRegistryHandler.DEFAULT_CLIENT_MAX_TOTAL_BYTES);
		}

		/**
		 * Sets the address to bind (default the loopback address).
		 * @param address the address
		 * @return this builder
		 */
		public Builder address(InetAddress address) {
			this.address = address;
			return this;
		}

		/**
		 * Sets the port (default 0: one the system chooses).
		 * @param port the port
		 * @return this builder
		 */
		public Builder port(int port) {
			if (port < 0 || port > 65535) {
				throw new IllegalArgumentException("port must be within 0..65535, was " + port);
			}
			this.port = port;
			return this;
		}

		/**
		 * Sets the base path (default
		 * {@value MetadataRegistryHandler#DEFAULT_BASE_PATH}).
		 * @param basePath the path; {@code ""} or {@code "/"} serves from the root
		 * @return this builder
		 */
		public Builder basePath(String basePath) {
			this.basePath = AgentPaths.checkBasePath(basePath);
			return this;
		}

		/**
		 * Serves the metadata of a backing exchange instead of an in-memory store of the
		 * server's own; the server does not close it.
		 * @param store the backing exchange
		 * @return this builder
		 */
		public Builder store(MetadataExchange store) {
			this.store = store;
			return this;
		}

		/**
		 * Sets the largest value accepted by {@code PUT} (default
		 * {@link MetadataValues#DEFAULT_MAX_BYTES}).
		 * @param maxBytes the cap
		 * @return this builder
		 */
		public Builder maxBytes(int maxBytes) {
			this.maxBytes = RegistryEntries.checkMaxBytes(maxBytes);
			return this;
		}

		/**
		 * Sets the cap on the number of entries created over HTTP (default
		 * {@value MetadataRegistryHandler#DEFAULT_MAX_ENTRIES}).
		 * @param maxEntries the cap
		 * @return this builder
		 * @throws IllegalArgumentException when not positive
		 * @see MetadataRegistryHandler.Builder#maxEntries(int)
		 */
		public Builder maxEntries(int maxEntries) {
			this.maxEntries = RegistryEntries.checkMaxEntries(maxEntries);
			return this;
		}

		/**
		 * Sets the cap on the bytes of metadata of the entries created over HTTP (default
		 * 256 MiB).
		 * @param maxTotalBytes the cap
		 * @return this builder
		 * @throws IllegalArgumentException when not positive
		 * @see MetadataRegistryHandler.Builder#maxTotalBytes(long)
		 */
		public Builder maxTotalBytes(long maxTotalBytes) {
			this.maxTotalBytes = RegistryEntries.checkMaxTotalBytes(maxTotalBytes);
			return this;
		}

		/**
		 * Sets how long an entry lives after its owner last renewed it (default 30 s).
		 * @param entryTtl the TTL
		 * @return this builder
		 * @throws IllegalArgumentException when shorter than a millisecond
		 * @see MetadataRegistryHandler.Builder#entryTtl(Duration)
		 */
		public Builder entryTtl(Duration entryTtl) {
			this.entryTtl = RegistryEntries.checkEntryTtl(entryTtl);
			return this;
		}

		/**
		 * Sets how many requests are handled at once (default 2): the admission of a
		 * request and the storing of its body each take a turn, its body is read between
		 * them without one. A request whose headers arrived waits for its turn no longer
		 * than its body timeout, then gets 503. Waiting connections hold a virtual thread
		 * each, no platform thread.
		 * @param threads the number of requests handled at once
		 * @return this builder
		 * @throws IllegalArgumentException when less than 1
		 */
		public Builder threads(int threads) {
			if (threads < 1) {
				throw new IllegalArgumentException("threads must be at least 1, was " + threads);
			}
			this.threads = threads;
			return this;
		}

		/**
		 * Sets the time from the start of a request to the end of its headers (default 10
		 * s). For a connection's first request it counts from the accept, for later ones
		 * from the request's first byte; a connection that misses it is closed.
		 * @param timeout the deadline
		 * @return this builder
		 * @throws IllegalArgumentException when shorter than a millisecond
		 */
		public Builder requestHeaderTimeout(Duration timeout) {
			this.requestHeaderTimeout = checkTimeout("requestHeaderTimeout", timeout);
			return this;
		}

		/**
		 * Sets the time from the end of a request's headers to the end of its body
		 * (default 30 s); a body still arriving then is cut and the connection closed.
		 * @param timeout the deadline
		 * @return this builder
		 * @throws IllegalArgumentException when shorter than a millisecond
		 */
		public Builder requestBodyTimeout(Duration timeout) {
			this.requestBodyTimeout = checkTimeout("requestBodyTimeout", timeout);
			return this;
		}

		/**
		 * Sets the time a client has to take an answer (default 30 s); a connection whose
		 * client does not read is closed then.
		 * @param timeout the deadline
		 * @return this builder
		 * @throws IllegalArgumentException when shorter than a millisecond
		 */
		public Builder responseTimeout(Duration timeout) {
			this.responseTimeout = checkTimeout("responseTimeout", timeout);
			return this;
		}

		/**
		 * Sets how long a connection waits for its next request before it is closed
		 * (default 30 s).
		 * @param timeout the idle timeout
		 * @return this builder
		 * @throws IllegalArgumentException when shorter than a millisecond
		 */
		public Builder idleTimeout(Duration timeout) {
			this.idleTimeout = checkTimeout("idleTimeout", timeout);
			return this;
		}

		/**
		 * Sets the cap on open connections (default {@value #DEFAULT_MAX_CONNECTIONS}).
		 * At the cap a new connection closes the one that waited longest without
		 * completing a request, of the address that holds the most connections; only when
		 * every connection is being answered is the new one closed at accept.
		 * @param maxConnections the cap
		 * @return this builder
		 * @throws IllegalArgumentException when less than 1
		 */
		public Builder maxConnections(int maxConnections) {
			if (maxConnections < 1) {
				throw new IllegalArgumentException("maxConnections must be at least 1, was " + maxConnections);
			}
			this.maxConnections = maxConnections;
			return this;
		}

		/**
		 * Sets the minimum rate of a request body, in bytes per second on average from
		 * the end of its headers (default {@value #DEFAULT_MIN_BODY_RATE}); the first
		 * second is free of it. A body that falls behind is cut and its connection
		 * closed, as at the body timeout. 0 turns the rate off (the body timeout still
		 * holds).
		 * @param bytesPerSecond the rate
		 * @return this builder
		 * @throws IllegalArgumentException when negative
		 */
		public Builder minBodyRate(long bytesPerSecond) {
			if (bytesPerSecond < 0) {
				throw new IllegalArgumentException("minBodyRate must not be negative, was " + bytesPerSecond);
			}
			this.minBodyRate = bytesPerSecond;
			return this;
		}

		private static Duration checkTimeout(String name, @Nullable Duration timeout) {
			if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0) {
				throw new IllegalArgumentException(name + " must be at least 1ms, was " + timeout);
			}
			return timeout;
		}

		/**
		 * Binds and starts the server.
		 * @return the running server
		 * @throws IllegalArgumentException when neither a token nor a client was set, or
		 * a blank token, or a client has the shared token
		 * @throws NixlException {@link NixlStatus#UNAVAILABLE} when the address cannot be
		 * bound
		 */
		public MetadataHttpServer start() {
			String token = this.token;
			if ((token == null && !this.clients) || (token != null && token.isBlank())) {
				throw new IllegalArgumentException("the metadata server needs a bearer token: set token(...) or "
						+ "client(...); a blank token is refused");
			}
			MetadataRegistryHandler.Builder registry = this.registry.basePath(this.basePath)
				.maxBytes(this.maxBytes)
				.maxEntries(this.maxEntries)
				.maxTotalBytes(this.maxTotalBytes)
				.entryTtl(this.entryTtl);
			if (token != null) {
				registry.token(token.trim());
			}
			MetadataExchange backing = this.store;
			MetadataExchange store = (backing != null) ? backing : new InMemoryMetadataExchange(this.maxBytes);
			MetadataRegistryHandler handler;
			try {
				handler = registry.store(store).build();
			}
			catch (RuntimeException ex) {
				if (backing == null) {
					store.close();
				}
				throw ex;
			}
			try {
				return new MetadataHttpServer(this, handler, store, backing == null);
			}
			catch (IOException ex) {
				if (backing == null) {
					store.close();
				}
				throw new NixlException(NixlStatus.UNAVAILABLE, "metadata_http_server", null, null,
						"cannot bind " + this.address.getHostAddress() + ":" + this.port + ": " + ex.getMessage(), ex);
			}
		}

	}

}
