package dev.nixl4j.metadata;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * A small metadata server on the JDK's {@link HttpServer}, for applications without a web
 * framework: it serves the layout {@link HttpMetadataExchange} talks to, {@code GET},
 * {@code PUT} and {@code DELETE} of {@code {base}/agents/{name}/metadata}, from a backing
 * {@link MetadataExchange} or from its own {@link InMemoryMetadataExchange}.
 *
 * <p>
 * Requests are answered by a {@link MetadataRegistryHandler}: every request needs
 * {@code Authorization: Bearer <token>}; without it, or with another token, the answer is
 * 401 with {@code WWW-Authenticate: Bearer} and no metadata. Each entry can be replaced,
 * renewed or deleted only by the agent that created it (403 otherwise), entries expire
 * when their owner stops renewing them, and the number and bytes of entries are capped
 * (507 when full); see the handler for the rules. A {@code PUT} body over the cap is
 * refused with 413 and one that is not NIXL metadata of the agent in the path with 400;
 * other methods get 405. Bodies, tokens and owner secrets are never logged.
 *
 * <p>
 * It binds the loopback address by default. Closing it stops the listener and its
 * threads.
 */
public final class MetadataHttpServer implements AutoCloseable {

	private static final AtomicInteger servers = new AtomicInteger();

	private final HttpServer server;

	private final ExecutorService executor;

	/** The executor's threads, joined by {@link #close()}. */
	private final Queue<Thread> workers = new ConcurrentLinkedQueue<>();

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
		int id = servers.incrementAndGet();
		AtomicInteger threads = new AtomicInteger();
		this.executor = Executors.newFixedThreadPool(builder.threads, runnable -> {
			Thread thread = new Thread(runnable, "nixl4j-metadata-http-" + id + "-" + threads.incrementAndGet());
			thread.setDaemon(true);
			this.workers.add(thread);
			return thread;
		});
		this.server = HttpServer.create(new InetSocketAddress(builder.address, builder.port), 0);
		this.server.setExecutor(this.executor);
		this.server.createContext(this.basePath.isEmpty() ? "/" : this.basePath, this::handle);
		this.server.start();
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
		return this.server.getAddress();
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
	 * Stops the server: open exchanges are closed, the listener and its threads end, and
	 * the in-memory store (when the server made its own) is dropped. A backing exchange
	 * stays open.
	 */
	@Override
	public void close() {
		this.server.stop(0);
		this.executor.shutdown();
		try {
			if (!this.executor.awaitTermination(5, TimeUnit.SECONDS)) {
				this.executor.shutdownNow();
				this.executor.awaitTermination(5, TimeUnit.SECONDS);
			}
			// a terminated pool's last threads may still be on their way out
			for (Thread worker : this.workers) {
				worker.join(Duration.ofSeconds(1));
			}
		}
		catch (InterruptedException ex) {
			this.executor.shutdownNow();
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

	private void handle(HttpExchange exchange) throws IOException {
		try (exchange) {
			// closing the exchange closes the request body
			MetadataRegistryHandler.Response response = this.handler.handle(exchange.getRequestMethod(),
					exchange.getRequestURI().getRawPath(), exchange.getRequestHeaders().getFirst("Authorization"),
					exchange.getRequestHeaders().getFirst(MetadataRegistryHandler.OWNER_SECRET_HEADER),
					contentLength(exchange.getRequestHeaders().getFirst("Content-Length")), exchange.getRequestBody());
			response.headers().forEach(exchange.getResponseHeaders()::set);
			byte[] body = response.body();
			if (body.length == 0) {
				exchange.sendResponseHeaders(response.status(), -1);
				return;
			}
			exchange.sendResponseHeaders(response.status(), body.length);
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(body);
			}
		}
	}

	private static long contentLength(@Nullable String header) {
		if (header == null) {
			return -1;
		}
		try {
			return Long.parseLong(header.trim());
		}
		catch (NumberFormatException ex) {
			return -1;
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
			this.basePath = MetadataRegistryHandler.checkBasePath(basePath);
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
			this.maxBytes = MetadataRegistryHandler.checkMaxBytes(maxBytes);
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
			this.maxEntries = MetadataRegistryHandler.checkMaxEntries(maxEntries);
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
			this.maxTotalBytes = MetadataRegistryHandler.checkMaxTotalBytes(maxTotalBytes);
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
			this.entryTtl = MetadataRegistryHandler.checkEntryTtl(entryTtl);
			return this;
		}

		/**
		 * Sets how many threads serve requests (default 2).
		 * @param threads the number of threads
		 * @return this builder
		 */
		public Builder threads(int threads) {
			if (threads < 1) {
				throw new IllegalArgumentException("threads must be at least 1, was " + threads);
			}
			this.threads = threads;
			return this;
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
