package dev.nixl4j.sample.web;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import dev.nixl4j.SettingChecks;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Reads a request's body, at most {@code maxBytes} of it and within {@code timeout},
 * before anything parses it: a {@code Content-Length} over the limit is answered 413
 * without reading a byte, a longer chunked body 413 as soon as it passes the limit, and a
 * body still arriving at the deadline 408. Each answer is a problem document naming the
 * limit and closes the connection, so that the rest of the body is not read.
 */
public class RequestBodyLimitFilter extends OncePerRequestFilter {

	private static final int CHUNK = 8192;

	private final long maxBytes;

	private final Duration timeout;

	/**
	 * Creates the filter.
	 * @param maxBytes the largest body read
	 * @param timeout the longest time reading a body may take
	 */
	public RequestBodyLimitFilter(long maxBytes, Duration timeout) {
		if (maxBytes < 0 || maxBytes > Integer.MAX_VALUE - CHUNK) {
			throw new IllegalArgumentException("sample.max-request-bytes must lie in [0, 2 GB), not " + maxBytes);
		}
		this.maxBytes = maxBytes;
		this.timeout = SettingChecks.requirePositive(timeout, "sample.request-body-timeout");
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		long declared = request.getContentLengthLong();
		if (declared > this.maxBytes) {
			refuse(request, response, HttpStatus.CONTENT_TOO_LARGE, "Request body too large", "the request body has "
					+ declared + " bytes; this worker reads at most " + this.maxBytes + " (sample.max-request-bytes)");
			return;
		}
		ByteArrayOutputStream body = new ByteArrayOutputStream((declared > 0) ? (int) declared : CHUNK);
		long deadline = System.nanoTime() + this.timeout.toNanos();
		byte[] chunk = new byte[CHUNK];
		InputStream in = request.getInputStream();
		int n;
		// Each read returns what has arrived, within Tomcat's connection timeout; the
		// deadline
		// bounds their sum.
		while ((n = in.read(chunk, 0, (int) Math.min(CHUNK, this.maxBytes + 1 - body.size()))) > 0) {
			body.write(chunk, 0, n);
			if (body.size() > this.maxBytes) {
				refuse(request, response, HttpStatus.CONTENT_TOO_LARGE, "Request body too large",
						"the request body " + "has more than " + this.maxBytes + " bytes; this worker reads at most "
								+ this.maxBytes + " (sample.max-request-bytes)");
				return;
			}
			if (System.nanoTime() - deadline > 0) {
				refuse(request, response, HttpStatus.REQUEST_TIMEOUT, "Request body too slow", "the request body "
						+ "was not complete after " + this.timeout.toMillis() + " ms (sample.request-body-timeout)");
				return;
			}
		}
		chain.doFilter(new BufferedBodyRequest(request, body.toByteArray()), response);
	}

	private static void refuse(HttpServletRequest request, HttpServletResponse response, HttpStatus status,
			String title, String detail) throws IOException {
		response.setHeader(HttpHeaders.CONNECTION, "close");
		ProblemAnswers.write(request, response, status, title, detail);
	}

	/**
	 * The request with its body read: parsers see only the bytes the limit let through.
	 */
	private static final class BufferedBodyRequest extends HttpServletRequestWrapper {

		private final byte[] body;

		BufferedBodyRequest(HttpServletRequest request, byte[] body) {
			super(request);
			this.body = body;
		}

		@Override
		public ServletInputStream getInputStream() {
			ByteArrayInputStream in = new ByteArrayInputStream(this.body);
			return new ServletInputStream() {

				@Override
				public int read() {
					return in.read();
				}

				@Override
				public int read(byte[] b, int off, int len) {
					return in.read(b, off, len);
				}

				@Override
				public boolean isFinished() {
					return in.available() == 0;
				}

				@Override
				public boolean isReady() {
					return true;
				}

				@Override
				public void setReadListener(ReadListener listener) {
					throw new IllegalStateException("the body has been read already");
				}

			};
		}

		@Override
		public BufferedReader getReader() {
			String encoding = getCharacterEncoding();
			return new BufferedReader(new InputStreamReader(new ByteArrayInputStream(this.body),
					(encoding != null) ? Charset.forName(encoding) : StandardCharsets.UTF_8));
		}

		@Override
		public int getContentLength() {
			return this.body.length;
		}

		@Override
		public long getContentLengthLong() {
			return this.body.length;
		}

	}

}
