package dev.nixl4j.autoconfigure.web;

import java.io.IOException;

import dev.nixl4j.metadata.MetadataRegistryHandler;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

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

	/**
	 * Creates the servlet.
	 * @param handler the registry's request handling
	 */
	public MetadataRegistryServlet(MetadataRegistryHandler handler) {
		this.handler = handler;
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
