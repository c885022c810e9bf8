package dev.nixl4j.autoconfigure.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.metadata.http.MetadataRegistryHandler;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

/**
 * A servlet that serves the HTTP metadata registry ({@code GET}, {@code PUT},
 * {@code POST} and {@code DELETE} of {@code {base-path}/agents/{name}/metadata}) through
 * a {@link MetadataRegistryHandler}, which owns every rule: the bearer tokens, the
 * entries' owners (the owner secret header is passed through), their expiry, the
 * registry's bounds and quotas, the size cap, the metadata check and the allowed methods.
 *
 * <p>
 * A request never waits for metadata to appear (a {@code GET} of an unknown agent is a
 * 404 at once). A {@code PUT} is admitted by the handler before its body is read (a
 * refusal, for example a declared length past the caller's quota, is answered without
 * reading it), and its body is then read without blocking a thread (the servlet API's
 * non-blocking reads), under a total deadline ({@code body-timeout}, from the admission)
 * and a minimum rate ({@code min-body-rate} on average, after the first second). A body
 * that misses either is answered 408 with {@code Connection: close}, and the room it had
 * reserved in the registry is given back at once; the container's own timeout, which
 * starts again with every byte, is not relied on. Where a filter in front does not
 * support asynchronous requests, the body is read blocking and the deadline and rate are
 * checked after every read. Responses without metadata carry at most a plain-text reason,
 * and no error page is rendered for them.
 */
public final class MetadataRegistryServlet extends HttpServlet {

	private static final long serialVersionUID = 1L;

	/** The default deadline of a request body, from its admission: 30 s. */
	public static final Duration DEFAULT_BODY_TIMEOUT = Duration.ofSeconds(30);

	/** The default minimum rate of a request body, in bytes per second: 16 KiB/s. */
	public static final long DEFAULT_MIN_BODY_RATE = 16 << 10;

	/** The first second of a body is free of the minimum rate. */
	private static final long RATE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private static final System.Logger logger = System.getLogger(MetadataRegistryServlet.class.getName());

	private final transient MetadataRegistryHandler handler;

	private final long bodyTimeoutNanos;

	private final long minBodyRate;

	private transient volatile @Nullable ScheduledExecutorService timers;

	/**
	 * Creates the servlet with the default body deadline and minimum rate.
	 * @param handler the registry's request handling
	 */
	public MetadataRegistryServlet(MetadataRegistryHandler handler) {
		this(handler, DEFAULT_BODY_TIMEOUT, DEFAULT_MIN_BODY_RATE);
	}

	/**
	 * Creates the servlet.
	 * @param handler the registry's request handling
	 * @param bodyTimeout the deadline of a {@code PUT} body, from its admission
	 * @param minBodyRate the minimum rate of a body in bytes per second, on average after
	 * its first second; 0 for none
	 * @throws IllegalArgumentException when the timeout is shorter than a millisecond or
	 * the rate is negative
	 */
	public MetadataRegistryServlet(MetadataRegistryHandler handler, Duration bodyTimeout, long minBodyRate) {
		if (bodyTimeout.compareTo(Duration.ofMillis(1)) < 0) {
			throw new IllegalArgumentException("the body timeout must be at least 1 ms, was " + bodyTimeout);
		}
		if (minBodyRate < 0) {
			throw new IllegalArgumentException("the minimum body rate must not be negative, was " + minBodyRate);
		}
		this.handler = handler;
		this.bodyTimeoutNanos = bodyTimeout.toNanos();
		this.minBodyRate = minBodyRate;
	}

	/**
	 * Starts expiring entries on a timer ({@link MetadataRegistryHandler#expireDue}), so
	 * that the entry of an agent that died leaves the registry, and its watchers hear of
	 * it, without waiting for another request. The same thread keeps the bodies'
	 * deadlines.
	 */
	@Override
	public void init() {
		ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "nixl4j-metadata-registry-expiry");
			thread.setDaemon(true);
			return thread;
		});
		long interval = this.handler.sweepInterval().toNanos();
		timers.scheduleWithFixedDelay(this.handler::expireDue, interval, interval, TimeUnit.NANOSECONDS);
		this.timers = timers;
	}

	@Override
	public void destroy() {
		ScheduledExecutorService timers = this.timers;
		if (timers != null) {
			timers.shutdownNow();
		}
	}

	@Override
	protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
		MetadataRegistryHandler.Call call = this.handler.begin(request.getMethod(), rawPath(request),
				request.getHeader("Authorization"), request.getHeader(MetadataRegistryHandler.OWNER_SECRET_HEADER),
				request.getContentLengthLong());
		MetadataRegistryHandler.Response answer = call.response();
		if (answer != null) {
			call.close();
			send(response, answer);
			return;
		}
		ScheduledExecutorService timers = this.timers;
		if (request.isAsyncSupported() && timers != null) {
			new AsyncBody(call, request, response, timers).start();
			return;
		}
		try (call) {
			byte[] body = readBlocking(request.getInputStream(), call.maxBodyBytes() + 1);
			if (body == null) {
				tooSlow(response);
				return;
			}
			send(response, call.complete(body));
		}
	}

	/**
	 * Reads a body with blocking reads, checking the deadline and the rate after each.
	 * @return the body, or {@code null} when it missed the deadline or the rate
	 */
	private byte @Nullable [] readBlocking(InputStream in, int max) throws IOException {
		long start = System.nanoTime();
		ByteArrayOutputStream body = new ByteArrayOutputStream();
		byte[] buffer = new byte[8192];
		while (body.size() < max) {
			int n = in.read(buffer, 0, Math.min(buffer.length, max - body.size()));
			if (n < 0) {
				return body.toByteArray();
			}
			body.write(buffer, 0, n);
			if (System.nanoTime() - deadline(start, body.size()) >= 0 && body.size() < max) {
				return null;
			}
		}
		return body.toByteArray();
	}

	/**
	 * The time a body that began at {@code start} and has {@code received} bytes must get
	 * more by: its deadline, or earlier when it falls behind the minimum rate.
	 */
	private long deadline(long start, long received) {
		long deadline = start + this.bodyTimeoutNanos;
		if (this.minBodyRate <= 0) {
			return deadline;
		}
		double seconds = (double) received / this.minBodyRate;
		long onPace = start + RATE_GRACE_NANOS + (long) Math.min(seconds * 1e9, (double) this.bodyTimeoutNanos);
		return Math.min(deadline, onPace);
	}

	private void tooSlow(HttpServletResponse response) throws IOException {
		byte[] reason = ("the request body did not arrive within " + Duration.ofNanos(this.bodyTimeoutNanos)
				+ ((this.minBodyRate > 0)
						? " at " + this.minBodyRate + " bytes per second on average after its first " + "second" : "")
				+ "; the registry gave its room back")
			.getBytes(StandardCharsets.UTF_8);
		response.setStatus(HttpServletResponse.SC_REQUEST_TIMEOUT);
		response.setHeader("Connection", "close");
		response.setContentType("text/plain; charset=utf-8");
		response.setContentLength(reason.length);
		response.getOutputStream().write(reason);
	}

	private static void send(HttpServletResponse response, MetadataRegistryHandler.Response answer) throws IOException {
		response.setStatus(answer.status());
		answer.headers().forEach(response::setHeader);
		byte[] body = answer.body();
		if (body.length > 0) {
			response.setContentLength(body.length);
			response.getOutputStream().write(body);
		}
		else if (answer.status() != HttpServletResponse.SC_NO_CONTENT) {
			response.setContentLength(0);
		}
	}

	/**
	 * The request path as sent (percent-encoded), without the context path, so that agent
	 * names are decoded once, by the handler.
	 */
	private static String rawPath(HttpServletRequest request) {
		String uri = request.getRequestURI();
		String contextPath = request.getContextPath();
		return uri.startsWith(contextPath) ? uri.substring(contextPath.length()) : uri;
	}

	@Override
	public String toString() {
		return "MetadataRegistryServlet[" + this.handler.basePath() + "]";
	}

	/**
	 * A {@code PUT} body read with non-blocking reads: the container calls
	 * {@link #onDataAvailable()} as bytes arrive, and a timer cuts the body at its
	 * deadline or when it falls behind the minimum rate. Whichever ends it first answers;
	 * the others find it ended.
	 */
	private final class AsyncBody implements ReadListener, AsyncListener {

		private final MetadataRegistryHandler.Call call;

		private final HttpServletRequest request;

		private final HttpServletResponse response;

		private final ScheduledExecutorService timers;

		private final ByteArrayOutputStream body = new ByteArrayOutputStream();

		private final byte[] buffer = new byte[8192];

		private final long start = System.nanoTime();

		private final int max;

		/** Guarded by this. */
		private @Nullable AsyncContext async;

		/** Guarded by this. */
		private @Nullable ScheduledFuture<?> timer;

		/** Guarded by this. */
		private boolean ended;

		AsyncBody(MetadataRegistryHandler.Call call, HttpServletRequest request, HttpServletResponse response,
				ScheduledExecutorService timers) {
			this.call = call;
			this.request = request;
			this.response = response;
			this.timers = timers;
			this.max = call.maxBodyBytes() + 1;
		}

		void start() throws IOException {
			synchronized (this) {
				AsyncContext async = this.request.startAsync();
				// the container's own deadline, a backstop behind the timer's
				async.setTimeout(TimeUnit.NANOSECONDS.toMillis(MetadataRegistryServlet.this.bodyTimeoutNanos) + 5_000);
				async.addListener(this);
				this.async = async;
				schedule();
			}
			this.request.getInputStream().setReadListener(this);
		}

		private void schedule() {
			long delay = deadline(this.start, this.body.size()) - System.nanoTime();
			this.timer = this.timers.schedule(this::check, Math.max(delay, 0), TimeUnit.NANOSECONDS);
		}

		private void check() {
			synchronized (this) {
				if (this.ended) {
					return;
				}
				if (System.nanoTime() - deadline(this.start, this.body.size()) < 0) {
					schedule();
					return;
				}
				this.ended = true;
			}
			cut();
		}

		@Override
		public void onDataAvailable() throws IOException {
			byte[] tooLong = null;
			synchronized (this) {
				if (this.ended) {
					return;
				}
				ServletInputStream in = this.request.getInputStream();
				while (this.body.size() < this.max && in.isReady()) {
					int n = in.read(this.buffer, 0, Math.min(this.buffer.length, this.max - this.body.size()));
					if (n < 0) {
						break;
					}
					this.body.write(this.buffer, 0, n);
				}
				if (this.body.size() >= this.max) {
					this.ended = true;
					tooLong = this.body.toByteArray();
				}
			}
			if (tooLong != null) {
				// longer than the room it was given: the handler says why
				end(this.call.complete(tooLong));
			}
		}

		@Override
		public void onAllDataRead() {
			byte[] all;
			synchronized (this) {
				if (this.ended) {
					return;
				}
				this.ended = true;
				all = this.body.toByteArray();
			}
			end(this.call.complete(all));
		}

		@Override
		public void onError(Throwable failure) {
			synchronized (this) {
				if (this.ended) {
					return;
				}
				this.ended = true;
			}
			logger.log(System.Logger.Level.DEBUG,
					() -> "A registry request body failed: " + failure.getClass().getSimpleName());
			finish();
		}

		@Override
		public void onTimeout(AsyncEvent event) {
			synchronized (this) {
				if (this.ended) {
					return;
				}
				this.ended = true;
			}
			cut();
		}

		@Override
		public void onComplete(AsyncEvent event) {
			synchronized (this) {
				this.ended = true;
			}
			finish();
		}

		@Override
		public void onError(AsyncEvent event) {
			onError(event.getThrowable());
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
		}

		/**
		 * Answers 408 and closes the connection: the body missed its deadline or rate.
		 * Called once, by whoever set {@link #ended}, without holding this object's
		 * monitor (a container thread may wait for it while it holds the connection).
		 */
		private void cut() {
			this.call.close();
			try {
				tooSlow(this.response);
			}
			catch (IOException | RuntimeException ex) {
				logger.log(System.Logger.Level.DEBUG, () -> "Could not answer a slow registry request: " + ex);
			}
			finish();
		}

		/** Sends the handler's answer; called once, like {@link #cut()}. */
		private void end(MetadataRegistryHandler.Response answer) {
			try {
				send(this.response, answer);
			}
			catch (IOException | RuntimeException ex) {
				logger.log(System.Logger.Level.DEBUG, () -> "Could not answer a registry request: " + ex);
			}
			finish();
		}

		/** Gives the reservation back, stops the timer and ends the request. */
		private void finish() {
			this.call.close();
			ScheduledFuture<?> timer;
			AsyncContext async;
			synchronized (this) {
				timer = this.timer;
				async = this.async;
				this.async = null;
			}
			if (timer != null) {
				timer.cancel(false);
			}
			if (async != null) {
				try {
					async.complete();
				}
				catch (IllegalStateException ex) {
					// the container ended it already
				}
			}
		}

	}

}
