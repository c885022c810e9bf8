package dev.nixl4j.metadata;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
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
 * within {@link Builder#requestBodyTimeout(Duration) the body timeout}, the answer must
 * be taken within {@link Builder#responseTimeout(Duration) the response timeout}, and a
 * connection waits at most {@link Builder#idleTimeout(Duration) the idle timeout} for its
 * next request. Every read waits only for the time left until its deadline, so each byte
 * that arrives does not start the wait again. A connection that misses a deadline is
 * closed without an answer. At most {@link Builder#maxConnections(int)} connections are
 * open at once; one over the cap is closed as soon as it is accepted. Each connection has
 * a virtual thread; {@link Builder#threads(int)} requests are handled at once. None of
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

	private static final System.Logger logger = System.getLogger(MetadataHttpServer.class.getName());

	private static final AtomicInteger servers = new AtomicInteger();

	private final ServerSocket serverSocket;

	private final Thread acceptor;

	private final ScheduledThreadPoolExecutor deadlines;

	private final Set<Thread> deadlineThreads = ConcurrentHashMap.newKeySet();

	private final Set<Socket> connections = ConcurrentHashMap.newKeySet();

	private final Set<Thread> connectionThreads = ConcurrentHashMap.newKeySet();

	private final AtomicInteger openConnections = new AtomicInteger();

	private final AtomicLong refusedConnections = new AtomicLong();

	private final int maxConnections;

	private final Limits limits;

	private final Semaphore handling;

	private final String name;

	private volatile boolean closed;

	private final MetadataExchange store;

	private final boolean ownsStore;

	private final String basePath;

	private final MetadataRegistryHandler handler;

	private MetadataHttpServer(Builder builder, String token) throws IOException {
		this.basePath = builder.basePath;
		MetadataExchange backing = builder.store;
		this.ownsStore = (backing == null);
		this.store = (backing != null) ? backing : new InMemoryMetadataExchange(builder.maxBytes);
		this.handler = MetadataRegistryHandler.builder()
			.token(token)
			.basePath(this.basePath)
			.store(this.store)
			.maxBytes(builder.maxBytes)
			.maxEntries(builder.maxEntries)
			.maxTotalBytes(builder.maxTotalBytes)
			.entryTtl(builder.entryTtl)
			.build();
		this.limits = new Limits(builder.requestHeaderTimeout.toNanos(), builder.requestBodyTimeout.toNanos(),
				builder.responseTimeout.toNanos(), builder.idleTimeout.toNanos());
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
			socket.bind(new InetSocketAddress(builder.address, builder.port), 64);
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
	 * {@link Builder#maxConnections(int) the cap} was reached.
	 * @return the number of refused connections since the start
	 */
	public long refusedConnections() {
		return this.refusedConnections.get();
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
			for (Socket connection : this.connections) {
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
			if (this.closed || this.openConnections.incrementAndGet() > this.maxConnections) {
				if (!this.closed) {
					this.openConnections.decrementAndGet();
					if (this.refusedConnections.getAndIncrement() == 0) {
						logger.log(System.Logger.Level.WARNING, "The metadata server holds its maximum of "
								+ this.maxConnections + " connections and closes new ones until some end");
					}
				}
				closeQuietly(socket);
				continue;
			}
			this.connections.add(socket);
			Thread thread = Thread.ofVirtual()
				.name(this.name + "-connection-" + count.incrementAndGet())
				.unstarted(() -> serve(socket));
			this.connectionThreads.add(thread);
			thread.start();
		}
	}

	private void serve(Socket socket) {
		try {
			if (!this.closed) {
				new MetadataHttpConnection(socket, this.handler, this.limits, this.handling, this.deadlines).run();
			}
		}
		catch (IOException ex) {
			logger.log(System.Logger.Level.DEBUG, "A metadata connection failed to start: " + ex);
		}
		finally {
			closeQuietly(socket);
			this.connections.remove(socket);
			this.openConnections.decrementAndGet();
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
	 * The deadlines of a connection, in nanoseconds.
	 */
	record Limits(long headerTimeoutNanos, long bodyTimeoutNanos, long responseTimeoutNanos, long idleTimeoutNanos) {
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

		private Builder() {
		}

		/**
		 * Sets the bearer token clients must present (required).
		 * @param token the token
		 * @return this builder
		 */
		public Builder token(String token) {
			this.token = token;
			return this;
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
		 * Sets how many requests are handled at once (default 2); a request whose headers
		 * arrived waits for its turn no longer than its body timeout, then gets 503.
		 * Waiting connections hold a virtual thread each, no platform thread.
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
		 * Sets the cap on open connections (default {@value #DEFAULT_MAX_CONNECTIONS}); a
		 * connection over it is closed as soon as it is accepted.
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

		private static Duration checkTimeout(String name, @Nullable Duration timeout) {
			if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0) {
				throw new IllegalArgumentException(name + " must be at least 1ms, was " + timeout);
			}
			return timeout;
		}

		/**
		 * Binds and starts the server.
		 * @return the running server
		 * @throws IllegalArgumentException when no token, or a blank one, was set
		 * @throws NixlException {@link NixlStatus#UNAVAILABLE} when the address cannot be
		 * bound
		 */
		public MetadataHttpServer start() {
			String token = this.token;
			if (token == null || token.isBlank()) {
				throw new IllegalArgumentException(
						"the metadata server needs a bearer token: set token(...); a blank token is refused");
			}
			try {
				return new MetadataHttpServer(this, token.trim());
			}
			catch (IOException ex) {
				throw new NixlException(NixlStatus.UNAVAILABLE, "metadata_http_server", null, null,
						"cannot bind " + this.address.getHostAddress() + ":" + this.port + ": " + ex.getMessage(), ex);
			}
		}

	}

}
