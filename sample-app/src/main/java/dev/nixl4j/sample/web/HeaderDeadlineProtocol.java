package dev.nixl4j.sample.web;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.coyote.Adapter;
import org.apache.coyote.Processor;
import org.apache.coyote.Request;
import org.apache.coyote.Response;
import org.apache.coyote.http11.Http11NioProtocol;
import org.apache.coyote.http11.Http11Processor;
import org.apache.juli.logging.Log;
import org.apache.juli.logging.LogFactory;
import org.apache.tomcat.util.net.AbstractEndpoint.Handler.SocketState;
import org.apache.tomcat.util.net.NioChannel;
import org.apache.tomcat.util.net.SocketEvent;
import org.apache.tomcat.util.net.SocketWrapperBase;
import org.jspecify.annotations.Nullable;

/**
 * Tomcat's HTTP/1.1 NIO connector with a deadline on request headers. Tomcat's
 * {@code connectionTimeout} bounds each read, and every byte that arrives starts it
 * again, so a client that sends a header line every few seconds keeps its connection, and
 * a few thousand such clients fill {@code maxConnections}. Here a connection must get
 * from the first byte of a request (blank lines before it included) to the end of its
 * headers within {@link #setRequestHeaderTimeout the deadline}; a sweep on Tomcat's
 * utility executor closes one that does not, the way Tomcat closes one whose read timed
 * out.
 *
 * <p>
 * Tomcat creates the protocol by its class name
 * ({@code TomcatServletWebServerFactory.setProtocol}); the deadline is set by a protocol
 * handler customizer.
 */
public class HeaderDeadlineProtocol extends Http11NioProtocol {

	private static final Log logger = LogFactory.getLog(HeaderDeadlineProtocol.class);

	/**
	 * When each connection that is waiting for a request's headers got its first byte.
	 */
	private final Map<SocketWrapperBase<?>, Long> waitingSince = new ConcurrentHashMap<>();

	private final AtomicLong timeouts = new AtomicLong();

	private volatile long requestHeaderTimeoutMillis = 10_000;

	private volatile @Nullable ScheduledFuture<?> sweep;

	/**
	 * Sets the longest time from the first byte of a request to the end of its headers.
	 * @param millis the deadline in milliseconds (positive)
	 */
	public void setRequestHeaderTimeout(long millis) {
		if (millis <= 0) {
			throw new IllegalArgumentException("the request header timeout must be positive, not " + millis + " ms");
		}
		this.requestHeaderTimeoutMillis = millis;
	}

	/**
	 * Returns the longest time from the first byte of a request to the end of its
	 * headers.
	 * @return the deadline in milliseconds
	 */
	public long getRequestHeaderTimeout() {
		return this.requestHeaderTimeoutMillis;
	}

	/**
	 * Returns how many connections were closed because their headers missed the deadline.
	 * @return the count since start
	 */
	public long getRequestHeaderTimeouts() {
		return this.timeouts.get();
	}

	@Override
	public void start() throws Exception {
		super.start();
		long period = Math.clamp(this.requestHeaderTimeoutMillis / 10, 50, 1000);
		this.sweep = getUtilityExecutor().scheduleWithFixedDelay(this::closeLateConnections, period, period,
				TimeUnit.MILLISECONDS);
	}

	@Override
	public void stop() throws Exception {
		ScheduledFuture<?> running = this.sweep;
		if (running != null) {
			running.cancel(false);
			this.sweep = null;
		}
		this.waitingSince.clear();
		super.stop();
	}

	@Override
	protected Processor createProcessor() {
		return new DeadlineProcessor(getAdapter());
	}

	private void closeLateConnections() {
		long now = System.nanoTime();
		long limit = TimeUnit.MILLISECONDS.toNanos(this.requestHeaderTimeoutMillis);
		for (Iterator<Map.Entry<SocketWrapperBase<?>, Long>> it = this.waitingSince.entrySet().iterator(); it
			.hasNext();) {
			Map.Entry<SocketWrapperBase<?>, Long> entry = it.next();
			SocketWrapperBase<?> socket = entry.getKey();
			if (socket.isClosed()) {
				it.remove();
			}
			else if (now - entry.getValue() > limit) {
				it.remove();
				this.timeouts.incrementAndGet();
				if (logger.isDebugEnabled()) {
					logger
						.debug("Closing a connection from " + socket.getRemoteAddr() + ": its request headers were not "
								+ "complete within " + this.requestHeaderTimeoutMillis + " ms");
				}
				socket.setError(new SocketTimeoutException(
						"request headers not complete within " + this.requestHeaderTimeoutMillis + " ms"));
				if (!getEndpoint().processSocket(nio(socket), SocketEvent.ERROR, true)) {
					socket.close();
				}
			}
		}
	}

	/** Every socket of this protocol's endpoint is an NIO channel's. */
	@SuppressWarnings("unchecked")
	private static SocketWrapperBase<NioChannel> nio(SocketWrapperBase<?> socket) {
		return (SocketWrapperBase<NioChannel>) socket;
	}

	/**
	 * Tomcat's processor, which notes when a connection starts waiting for headers (the
	 * first read after the previous request went to the application) and when they are
	 * complete (the request goes to the application).
	 */
	private final class DeadlineProcessor extends Http11Processor {

		private final Adapter adapter;

		DeadlineProcessor(Adapter adapter) {
			super(HeaderDeadlineProtocol.this, adapter);
			this.adapter = new HeadersCompleteAdapter(adapter, this);
		}

		@Override
		public SocketState service(SocketWrapperBase<?> socket) throws IOException {
			HeaderDeadlineProtocol.this.waitingSince.putIfAbsent(socket, System.nanoTime());
			return super.service(socket);
		}

		@Override
		public Adapter getAdapter() {
			return this.adapter;
		}

		void headersComplete() {
			SocketWrapperBase<?> socket = getSocketWrapper();
			if (socket != null) {
				HeaderDeadlineProtocol.this.waitingSince.remove(socket);
			}
		}

	}

	/** Tomcat's adapter, told first that a request's headers are complete. */
	private record HeadersCompleteAdapter(Adapter delegate, DeadlineProcessor processor) implements Adapter {

		@Override
		public void service(Request req, Response res) throws Exception {
			this.processor.headersComplete();
			this.delegate.service(req, res);
		}

		@Override
		public boolean prepare(Request req, Response res) throws Exception {
			return this.delegate.prepare(req, res);
		}

		@Override
		public boolean asyncDispatch(Request req, Response res, SocketEvent status) throws Exception {
			return this.delegate.asyncDispatch(req, res, status);
		}

		@Override
		public void log(Request req, Response res, long time) {
			this.delegate.log(req, res, time);
		}

		@Override
		public void checkRecycled(Request req, Response res) {
			this.delegate.checkRecycled(req, res);
		}

		@Override
		public String getDomain() {
			return this.delegate.getDomain();
		}

	}

}
