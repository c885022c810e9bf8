package dev.nixl4j.metadata;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * A small metadata server on the JDK's {@link HttpServer}, for applications without a web
 * framework: it serves the layout {@link HttpMetadataExchange} talks to, {@code GET}, {@code PUT}
 * and {@code DELETE} of {@code {base}/agents/{name}/metadata}, from a backing
 * {@link MetadataExchange} or from its own {@link InMemoryMetadataExchange}.
 *
 * <p>Every request needs {@code Authorization: Bearer <token>}; without it, or with another token,
 * the answer is 401 with {@code WWW-Authenticate: Bearer} and no metadata. A {@code PUT} body over
 * the cap is refused with 413 and one that is not NIXL metadata of the agent in the path with 400;
 * other methods get 405. Bodies and tokens are never logged.
 *
 * <p>It binds the loopback address by default. Closing it stops the listener and its threads.
 */
public final class MetadataHttpServer implements AutoCloseable {

	private static final System.Logger logger = System.getLogger(MetadataHttpServer.class.getName());

	private static final AtomicInteger servers = new AtomicInteger();

	private final HttpServer server;

	private final ExecutorService executor;

	private final MetadataExchange store;

	private final boolean ownsStore;

	private final String basePath;

	private final byte[] tokenDigest;

	private final int maxBytes;

	private MetadataHttpServer(Builder builder, String token) throws IOException {
		this.basePath = builder.basePath;
		this.tokenDigest = sha256(token.getBytes(StandardCharsets.UTF_8));
		this.maxBytes = builder.maxBytes;
		MetadataExchange backing = builder.store;
		this.ownsStore = (backing == null);
		this.store = (backing != null) ? backing : new InMemoryMetadataExchange(builder.maxBytes);
		int id = servers.incrementAndGet();
		AtomicInteger threads = new AtomicInteger();
		this.executor = Executors.newFixedThreadPool(builder.threads, runnable -> {
			Thread thread = new Thread(runnable, "nixl4j-metadata-http-" + id + "-" + threads.incrementAndGet());
			thread.setDaemon(true);
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
	 * Returns the bound address, with the port the system chose when port 0 was asked for.
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
	 * Stops the server: open exchanges are closed, the listener and its threads end, and the
	 * in-memory store (when the server made its own) is dropped. A backing exchange stays open.
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
			serve(exchange);
		}
	}

	private void serve(HttpExchange exchange) throws IOException {
		try {
			if (!authorized(exchange)) {
				logger.log(System.Logger.Level.DEBUG, () -> "Refused a request without a valid bearer token from "
						+ exchange.getRemoteAddress());
				exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"nixl4j\"");
				respond(exchange, 401, null);
				return;
			}
			String agentName = agentName(exchange.getRequestURI().getRawPath());
			if (agentName == null) {
				respond(exchange, 404, null);
				return;
			}
			switch (exchange.getRequestMethod()) {
				case "GET" -> get(exchange, agentName);
				case "PUT" -> put(exchange, agentName);
				case "DELETE" -> {
					this.store.invalidate(agentName);
					respond(exchange, 204, null);
				}
				default -> {
					exchange.getResponseHeaders().set("Allow", "GET, PUT, DELETE");
					respond(exchange, 405, null);
				}
			}
		}
		catch (NixlException ex) {
			logger.log(System.Logger.Level.WARNING, "The metadata store failed: " + ex.status());
			respond(exchange, 503, null);
		}
	}

	private void get(HttpExchange exchange, String agentName) throws IOException {
		AgentMetadata metadata;
		try {
			metadata = this.store.fetch(agentName, Duration.ZERO);
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.TIMEOUT) {
				respond(exchange, 404, null);
				return;
			}
			throw ex;
		}
		exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
		exchange.getResponseHeaders().set("Cache-Control", "no-store");
		respond(exchange, 200, metadata.toByteArray());
	}

	private void put(HttpExchange exchange, String agentName) throws IOException {
		String declared = exchange.getRequestHeaders().getFirst("Content-Length");
		if (declared != null && isOver(declared)) {
			respond(exchange, 413, null);
			return;
		}
		byte[] body;
		try (InputStream in = exchange.getRequestBody()) {
			body = in.readNBytes(this.maxBytes + 1);
		}
		if (body.length > this.maxBytes) {
			respond(exchange, 413, null);
			return;
		}
		AgentMetadata metadata;
		try {
			metadata = MetadataValues.check("send_local_md", agentName, body, this.maxBytes);
		}
		catch (NixlException ex) {
			respond(exchange, 400, null);
			return;
		}
		this.store.publish(agentName, metadata);
		respond(exchange, 204, null);
	}

	private boolean isOver(String contentLength) {
		try {
			return Long.parseLong(contentLength.trim()) > this.maxBytes;
		}
		catch (NumberFormatException ex) {
			return false;
		}
	}

	private boolean authorized(HttpExchange exchange) {
		String header = exchange.getRequestHeaders().getFirst("Authorization");
		if (header == null || header.length() < 7 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
			return false;
		}
		byte[] presented = sha256(header.substring(7).trim().getBytes(StandardCharsets.UTF_8));
		return MessageDigest.isEqual(this.tokenDigest, presented);
	}

	private @Nullable String agentName(String rawPath) {
		String prefix = this.basePath + AgentPaths.AGENTS;
		if (!rawPath.startsWith(prefix) || !rawPath.endsWith(AgentPaths.METADATA)
				|| rawPath.length() <= prefix.length() + AgentPaths.METADATA.length()) {
			return null;
		}
		return AgentPaths.decode(rawPath.substring(prefix.length(), rawPath.length() - AgentPaths.METADATA.length()));
	}

	private static void respond(HttpExchange exchange, int status, byte @Nullable [] body) throws IOException {
		if (body == null || body.length == 0) {
			exchange.sendResponseHeaders(status, -1);
			return;
		}
		exchange.sendResponseHeaders(status, body.length);
		try (OutputStream out = exchange.getResponseBody()) {
			out.write(body);
		}
	}

	private static byte[] sha256(byte[] bytes) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(bytes);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is not available", ex);
		}
	}

	/**
	 * Builds and starts a {@link MetadataHttpServer}.
	 */
	public static final class Builder {

		private @Nullable String token;

		private InetAddress address = InetAddress.getLoopbackAddress();

		private int port;

		private String basePath = "/nixl";

		private @Nullable MetadataExchange store;

		private int maxBytes = MetadataValues.DEFAULT_MAX_BYTES;

		private int threads = 2;

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
		 * Sets the base path (default {@code /nixl}).
		 * @param basePath the path; {@code ""} or {@code "/"} serves from the root
		 * @return this builder
		 */
		public Builder basePath(String basePath) {
			String trimmed = AgentPaths.trimBase(basePath);
			if (!trimmed.isEmpty() && !trimmed.startsWith("/")) {
				throw new IllegalArgumentException("the base path must start with '/', was " + basePath);
			}
			this.basePath = trimmed;
			return this;
		}

		/**
		 * Serves the metadata of a backing exchange instead of an in-memory store of the server's
		 * own; the server does not close it.
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
			if (maxBytes <= 0 || maxBytes == Integer.MAX_VALUE) {
				throw new IllegalArgumentException("maxBytes must be positive and below Integer.MAX_VALUE, was " + maxBytes);
			}
			this.maxBytes = maxBytes;
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
		 * @throws NixlException {@link NixlStatus#UNAVAILABLE} when the address cannot be bound
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
