package dev.nixl4j.autoconfigure.web;

import java.io.IOException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.metadata.MetadataRegistryHandler;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

/**
 * A servlet that serves the HTTP metadata registry ({@code GET}, {@code PUT},
 * {@code POST} and {@code DELETE} of {@code {base-path}/agents/{name}/metadata}) through
 * a {@link MetadataRegistryHandler}, which owns every rule: the bearer token, the
 * entries' owners (the owner secret header is passed through), their expiry, the
 * registry's bounds, the size cap, the metadata check and the allowed methods.
 *
 * <p>
 * A request never waits for metadata to appear (a {@code GET} of an unknown agent is a
 * 404 at once), and a {@code PUT} body is read no further than the cap, within the
 * container's read timeout; so a request thread, platform or virtual, is never held
 * longer than that. Responses without metadata have no body, and no error page is
 * rendered for them.
 */
public final class MetadataRegistryServlet extends HttpServlet {

	private static final long serialVersionUID = 1L;

	private final transient MetadataRegistryHandler handler;

	private transient volatile @Nullable ScheduledExecutorService sweeper;

	/**
	 * Creates the servlet.
	 * @param handler the registry's request handling
	 */
	public MetadataRegistryServlet(MetadataRegistryHandler handler) {
		this.handler = handler;
	}

	/**
	 * Starts expiring entries on a timer ({@link MetadataRegistryHandler#expireDue}), so
	 * that the entry of an agent that died leaves the registry, and its watchers hear of
	 * it, without waiting for another request.
	 */
	@Override
	public void init() {
		ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "nixl4j-metadata-registry-expiry");
			thread.setDaemon(true);
			return thread;
		});
		long interval = this.handler.sweepInterval().toNanos();
		sweeper.scheduleWithFixedDelay(this.handler::expireDue, interval, interval, TimeUnit.NANOSECONDS);
		this.sweeper = sweeper;
	}

	@Override
	public void destroy() {
		ScheduledExecutorService sweeper = this.sweeper;
		if (sweeper != null) {
			sweeper.shutdownNow();
		}
	}

	@Override
	protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
		MetadataRegistryHandler.Response answer = this.handler.handle(request.getMethod(), rawPath(request),
				request.getHeader("Authorization"), request.getHeader(MetadataRegistryHandler.OWNER_SECRET_HEADER),
				request.getContentLengthLong(), request.getInputStream());
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

}
