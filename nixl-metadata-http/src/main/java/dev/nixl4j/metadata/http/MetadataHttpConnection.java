package dev.nixl4j.metadata.http;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * One connection of a {@link MetadataHttpServer}: HTTP/1.1 requests read under deadlines
 * and answered by a {@link MetadataRegistryHandler}, one after another, until the client
 * closes, a deadline passes, or the request cannot be framed.
 *
 * <p>
 * Every read has the time left until the current phase's deadline as its socket timeout,
 * so a client that trickles bytes gains nothing: the request line and headers must arrive
 * within the header timeout (from the first byte; from the accept for the first request),
 * the body within the body timeout and, after its first second, at the minimum rate on
 * average, and the next request's first byte within the idle timeout. Writing an answer
 * is bounded by a scheduled close. A connection whose deadline passed is closed without
 * an answer, and the room its body had reserved in the registry is given back.
 */
final class MetadataHttpConnection implements Runnable {

	private static final System.Logger logger = System.getLogger(MetadataHttpConnection.class.getName());

	/** The most bytes of request line and headers together. */
	static final int MAX_HEADER_BYTES = 16 << 10;

	private static final int MAX_HEADERS = 100;

	/** The most bytes of an unread body drained to keep a connection open. */
	private static final long MAX_DRAIN_BYTES = 64 << 10;

	/**
	 * How long a body may take before the minimum rate applies: the first second of a
	 * body is free of it.
	 */
	static final long RATE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final Socket socket;

	private final MetadataHttpServer.Tracked tracked;

	private final MetadataRegistryHandler handler;

	private final MetadataHttpServer.Limits limits;

	private final Semaphore handling;

	private final ScheduledExecutorService deadlines;

	private final InputStream in;

	private final OutputStream out;

	MetadataHttpConnection(MetadataHttpServer.Tracked tracked, MetadataRegistryHandler handler,
			MetadataHttpServer.Limits limits, Semaphore handling, ScheduledExecutorService deadlines)
			throws IOException {
		Socket socket = tracked.socket;
		this.socket = socket;
		this.tracked = tracked;
		this.handler = handler;
		this.limits = limits;
		this.handling = handling;
		this.deadlines = deadlines;
		this.in = new BufferedInputStream(socket.getInputStream(), 8192);
		this.out = new BufferedOutputStream(socket.getOutputStream(), 8192);
	}

	@Override
	public void run() {
		this.tracked.started();
		try (this.socket) {
			long headerDeadline = System.nanoTime() + this.limits.headerTimeoutNanos();
			boolean first = true;
			while (true) {
				if (!first) {
					// the next request: idle timeout, then the header deadline
					if (!awaitByte(System.nanoTime() + this.limits.idleTimeoutNanos())) {
						return;
					}
					headerDeadline = System.nanoTime() + this.limits.headerTimeoutNanos();
				}
				first = false;
				if (!serve(headerDeadline)) {
					return;
				}
			}
		}
		catch (SocketTimeoutException ex) {
			logger.log(System.Logger.Level.DEBUG, "Closed a metadata connection that missed its deadline");
		}
		catch (IOException ex) {
			logger.log(System.Logger.Level.DEBUG, "A metadata connection ended: " + ex.getClass().getSimpleName());
		}
	}

	/**
	 * Reads and answers one request. The handler is asked before the body is read, and
	 * again once it is, each time holding one of the server's permits; the body itself is
	 * read without one, under the body deadline and the minimum rate, so that slow bodies
	 * never keep other requests from being handled.
	 * @return whether the connection stays open for another
	 */
	private boolean serve(long headerDeadline) throws IOException {
		Request request = readHead(headerDeadline);
		if (request == null) {
			return false;
		}
		this.tracked.busy = true;
		if (request.status != 0) {
			respond(request.status, Map.of(), new byte[0], true);
			return false;
		}
		long bodyStart = System.nanoTime();
		long bodyDeadline = bodyStart + this.limits.bodyTimeoutNanos();
		Body body = request.chunked ? new ChunkedBody(this, bodyStart, bodyDeadline)
				: new LengthBody(this, bodyStart, bodyDeadline, Math.max(request.contentLength, 0));
		String authorization = request.header("authorization");
		String ownerSecret = request.header(MetadataRegistryHandler.OWNER_SECRET_HEADER.toLowerCase(Locale.ROOT));
		MetadataRegistryHandler.Response response;
		if (!acquire(bodyDeadline)) {
			respond(503, Map.of(), new byte[0], true);
			return false;
		}
		MetadataRegistryHandler.Call call;
		try {
			call = this.handler.begin(request.method, request.rawPath, authorization, ownerSecret,
					request.chunked ? -1 : request.contentLength);
		}
		finally {
			this.handling.release();
		}
		boolean expectContinue = "100-continue".equalsIgnoreCase(request.header("expect"));
		boolean refusedBeforeBody;
		try (call) {
			response = call.response();
			refusedBeforeBody = response != null;
			if (response == null) {
				if (expectContinue) {
					write(bodyDeadline, "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
				}
				// a connection reading a body may be closed for a newcomer when the
				// server
				// is full and it is the one that waited longest
				this.tracked.busy = false;
				byte[] bytes = body.readNBytes(call.maxBodyBytes() + 1);
				this.tracked.busy = true;
				if (!acquire(bodyDeadline)) {
					respond(503, Map.of(), new byte[0], true);
					return false;
				}
				try {
					response = call.complete(bytes);
				}
				finally {
					this.handling.release();
				}
			}
		}
		// a client that asked before sending its body and was refused need not send it:
		// the connection is not kept to wait for it
		boolean keepAlive = request.keepAlive && body.drainable() && !(expectContinue && refusedBeforeBody);
		respond(response.status(), response.headers(), response.body(), !keepAlive);
		// what is left of an unread body is drained as a body is read
		this.tracked.busy = false;
		boolean open = keepAlive && body.drain(MAX_DRAIN_BYTES);
		this.tracked.progressed();
		return open;
	}

	/**
	 * Takes one of the server's permits, waiting until the deadline at most.
	 * @return whether it got one
	 */
	private boolean acquire(long deadline) throws IOException {
		try {
			return this.handling.tryAcquire(Math.max(deadline - System.nanoTime(), 0), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("interrupted while waiting to handle a request");
		}
	}

	/**
	 * Waits for the first byte of a request.
	 * @return {@code false} when the client closed the connection
	 */
	private boolean awaitByte(long deadline) throws IOException {
		this.in.mark(1);
		int b = read(deadline);
		if (b < 0) {
			return false;
		}
		this.in.reset();
		return true;
	}

	int read(long deadline) throws IOException {
		setTimeout(deadline);
		return this.in.read();
	}

	int read(byte[] buffer, int offset, int length, long deadline) throws IOException {
		setTimeout(deadline);
		return this.in.read(buffer, offset, length);
	}

	private void setTimeout(long deadline) throws IOException {
		long left = deadline - System.nanoTime();
		if (left <= 0) {
			throw new DeadlinePassed();
		}
		this.socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left))));
	}

	private @Nullable Request readHead(long deadline) throws IOException {
		int budget = MAX_HEADER_BYTES;
		String line;
		do {
			// blank lines before a request line are allowed (RFC 9112, 2.2)
			line = readLine(deadline, budget);
			if (line == null) {
				return null;
			}
			budget -= line.length() + 2;
		}
		while (line.isEmpty());
		Request request = new Request();
		String[] parts = line.split(" ", -1);
		if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
			request.status = 400;
			return request;
		}
		request.method = parts[0];
		String path = rawPath(parts[1]);
		if (request.method.isEmpty() || path == null) {
			request.status = 400;
			return request;
		}
		request.rawPath = path;
		Map<String, String> headers = new HashMap<>();
		while (true) {
			String header = readLine(deadline, budget);
			if (header == null) {
				return null;
			}
			if (header.isEmpty()) {
				break;
			}
			budget -= header.length() + 2;
			int colon = header.indexOf(':');
			if (colon <= 0 || headers.size() >= MAX_HEADERS || Character.isWhitespace(header.charAt(0))) {
				request.status = (colon > 0 && headers.size() >= MAX_HEADERS) ? 431 : 400;
				return request;
			}
			headers.putIfAbsent(header.substring(0, colon).trim().toLowerCase(Locale.ROOT),
					header.substring(colon + 1).trim());
		}
		request.headers = headers;
		String connection = request.header("connection");
		boolean close = connection != null && connection.toLowerCase(Locale.ROOT).contains("close");
		request.keepAlive = !close && "HTTP/1.1".equals(parts[2]);
		String transferEncoding = request.header("transfer-encoding");
		String contentLength = request.header("content-length");
		if (transferEncoding != null) {
			if (!"chunked".equalsIgnoreCase(transferEncoding) || contentLength != null) {
				request.status = 400;
				return request;
			}
			request.chunked = true;
		}
		else if (contentLength != null) {
			try {
				request.contentLength = Long.parseLong(contentLength);
			}
			catch (NumberFormatException ex) {
				request.status = 400;
				return request;
			}
			if (request.contentLength < 0) {
				request.status = 400;
				return request;
			}
		}
		return request;
	}

	/**
	 * Reads one CRLF- (or LF-) terminated line of ISO-8859-1 text.
	 * @return the line without its terminator, or {@code null} when the client closed the
	 * connection before a line began
	 */
	@Nullable String readLine(long deadline, int budget) throws IOException {
		StringBuilder line = new StringBuilder();
		while (true) {
			int b = read(deadline);
			if (b < 0) {
				if (line.isEmpty()) {
					return null;
				}
				throw new IOException("the connection closed within a line");
			}
			if (b == '\n') {
				int length = line.length();
				if (length > 0 && line.charAt(length - 1) == '\r') {
					line.setLength(length - 1);
				}
				return line.toString();
			}
			if (line.length() >= budget) {
				throw new IOException("the request head is longer than " + MAX_HEADER_BYTES + " bytes");
			}
			line.append((char) b);
		}
	}

	private static @Nullable String rawPath(String target) {
		try {
			URI uri = new URI(target);
			String path = uri.getRawPath();
			return (path == null || path.isEmpty()) ? null : path;
		}
		catch (URISyntaxException ex) {
			return null;
		}
	}

	private void respond(int status, Map<String, String> headers, byte[] body, boolean close) throws IOException {
		StringBuilder head = new StringBuilder(128);
		head.append("HTTP/1.1 ").append(status).append(' ').append(reason(status)).append("\r\n");
		headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
		if (status != 204) {
			head.append("Content-Length: ").append(body.length).append("\r\n");
		}
		if (close) {
			head.append("Connection: close\r\n");
		}
		head.append("\r\n");
		long deadline = System.nanoTime() + this.limits.responseTimeoutNanos();
		write(deadline, head.toString().getBytes(StandardCharsets.ISO_8859_1), (status != 204) ? body : new byte[0]);
	}

	/**
	 * Writes and flushes under a deadline: a client that does not read is closed when it
	 * passes.
	 */
	private void write(long deadline, byte[]... parts) throws IOException {
		ScheduledFuture<?> guard = guard(deadline);
		try {
			for (byte[] part : parts) {
				this.out.write(part);
			}
			this.out.flush();
		}
		finally {
			guard.cancel(false);
		}
	}

	private ScheduledFuture<?> guard(long deadline) {
		return this.deadlines.schedule(this::closeQuietly, Math.max(deadline - System.nanoTime(), 0),
				TimeUnit.NANOSECONDS);
	}

	private void closeQuietly() {
		try {
			this.socket.close();
		}
		catch (IOException ex) {
			// closing is all that was asked
		}
	}

	private static String reason(int status) {
		return switch (status) {
			case 200 -> "OK";
			case 201 -> "Created";
			case 204 -> "No Content";
			case 400 -> "Bad Request";
			case 401 -> "Unauthorized";
			case 403 -> "Forbidden";
			case 404 -> "Not Found";
			case 405 -> "Method Not Allowed";
			case 408 -> "Request Timeout";
			case 409 -> "Conflict";
			case 413 -> "Content Too Large";
			case 429 -> "Too Many Requests";
			case 431 -> "Request Header Fields Too Large";
			case 501 -> "Not Implemented";
			case 503 -> "Service Unavailable";
			case 507 -> "Insufficient Storage";
			default -> "Status";
		};
	}

	private static final class Request {

		String method = "";

		String rawPath = "";

		Map<String, String> headers = Map.of();

		long contentLength = -1;

		boolean chunked;

		boolean keepAlive;

		/** A status to answer at once and close, or 0 when the request can be handled. */
		int status;

		@Nullable String header(String lowerCaseName) {
			return this.headers.get(lowerCaseName);
		}

	}

	/** A deadline of the connection passed. */
	static final class DeadlinePassed extends SocketTimeoutException {

		private static final long serialVersionUID = 1L;

		DeadlinePassed() {
			super("the deadline passed");
		}

	}

	/**
	 * A request body read under the body deadline and the minimum rate: after its first
	 * second ({@link #RATE_GRACE_NANOS}), the bytes received must keep up with the rate
	 * on average since the headers ended, or the read times out.
	 */
	private abstract static class Body extends InputStream {

		final MetadataHttpConnection connection;

		private final long start;

		private final long deadline;

		private final long minBytesPerSecond;

		long received;

		boolean failed;

		Body(MetadataHttpConnection connection, long start, long deadline) {
			this.connection = connection;
			this.start = start;
			this.deadline = deadline;
			this.minBytesPerSecond = connection.limits.minBodyBytesPerSecond();
		}

		/**
		 * The time the next read must return by: the body deadline, or earlier, when the
		 * bytes received so far stop being enough for the minimum rate.
		 */
		long deadline() {
			if (this.minBytesPerSecond <= 0) {
				return this.deadline;
			}
			double seconds = (double) this.received / this.minBytesPerSecond;
			long onPace = this.start + RATE_GRACE_NANOS
					+ (long) Math.min(seconds * 1e9, (double) (this.deadline - this.start));
			return Math.min(this.deadline, onPace);
		}

		@Override
		public int read() throws IOException {
			byte[] one = new byte[1];
			int n = read(one, 0, 1);
			return (n < 0) ? -1 : (one[0] & 0xff);
		}

		@Override
		public int read(byte[] buffer, int offset, int length) throws IOException {
			try {
				int n = readBody(buffer, offset, length);
				if (n > 0) {
					this.received += n;
				}
				return n;
			}
			catch (IOException ex) {
				this.failed = true;
				throw ex;
			}
		}

		abstract int readBody(byte[] buffer, int offset, int length) throws IOException;

		abstract boolean finished();

		/** Whether the connection can still carry another request after this body. */
		boolean drainable() {
			return !this.failed;
		}

		/**
		 * Reads what is left of the body, up to a cap, so the connection can carry the
		 * next request.
		 * @return whether the body ended
		 */
		boolean drain(long maxBytes) throws IOException {
			byte[] buffer = new byte[8192];
			long left = maxBytes;
			while (!finished()) {
				if (left <= 0) {
					return false;
				}
				int n = read(buffer, 0, (int) Math.min(buffer.length, left));
				if (n < 0) {
					return finished();
				}
				left -= n;
			}
			return true;
		}

	}

	private static final class LengthBody extends Body {

		private long left;

		LengthBody(MetadataHttpConnection connection, long start, long deadline, long length) {
			super(connection, start, deadline);
			this.left = length;
		}

		@Override
		int readBody(byte[] buffer, int offset, int length) throws IOException {
			if (this.left == 0) {
				return -1;
			}
			if (length == 0) {
				return 0;
			}
			int n = this.connection.read(buffer, offset, (int) Math.min(length, this.left), deadline());
			if (n < 0) {
				throw new IOException("the connection closed within a request body");
			}
			this.left -= n;
			return n;
		}

		@Override
		boolean finished() {
			return this.left == 0;
		}

		@Override
		boolean drainable() {
			return super.drainable() && this.left <= MAX_DRAIN_BYTES;
		}

	}

	private static final class ChunkedBody extends Body {

		private long chunkLeft;

		private boolean ended;

		ChunkedBody(MetadataHttpConnection connection, long start, long deadline) {
			super(connection, start, deadline);
		}

		@Override
		int readBody(byte[] buffer, int offset, int length) throws IOException {
			if (this.ended) {
				return -1;
			}
			if (this.chunkLeft == 0) {
				String size = this.connection.readLine(deadline(), 1024);
				if (size == null) {
					throw new IOException("the connection closed within a request body");
				}
				int extension = size.indexOf(';');
				try {
					this.chunkLeft = Long.parseLong(((extension >= 0) ? size.substring(0, extension) : size).trim(),
							16);
				}
				catch (NumberFormatException ex) {
					throw new IOException("a chunk size is not a hexadecimal number");
				}
				if (this.chunkLeft < 0) {
					throw new IOException("a chunk size is negative");
				}
				if (this.chunkLeft == 0) {
					// trailers, up to the blank line that ends the body
					String trailer;
					int budget = MAX_HEADER_BYTES;
					do {
						trailer = this.connection.readLine(deadline(), budget);
						if (trailer == null) {
							throw new IOException("the connection closed within a request body");
						}
						budget -= trailer.length() + 2;
					}
					while (!trailer.isEmpty());
					this.ended = true;
					return -1;
				}
			}
			if (length == 0) {
				return 0;
			}
			int n = this.connection.read(buffer, offset, (int) Math.min(length, this.chunkLeft), deadline());
			if (n < 0) {
				throw new IOException("the connection closed within a request body");
			}
			this.chunkLeft -= n;
			if (this.chunkLeft == 0) {
				String end = this.connection.readLine(deadline(), 2);
				if (end == null || !end.isEmpty()) {
					throw new IOException("a chunk does not end with CRLF");
				}
			}
			return n;
		}

		@Override
		boolean finished() {
			return this.ended;
		}

	}

}
