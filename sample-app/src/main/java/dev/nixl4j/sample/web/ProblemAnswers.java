package dev.nixl4j.sample.web;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import dev.nixl4j.sample.SampleException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;

/**
 * Writes a refusal as the sample's problem document from a servlet filter, before any
 * controller runs: the same fields as the sample's exception handler (type, title,
 * status, detail, instance), and its {@code Retry-After}.
 */
public final class ProblemAnswers {

	private ProblemAnswers() {
	}

	/**
	 * Answers a request with a refusal.
	 * @param request the request
	 * @param response its response, not committed yet
	 * @param refusal the refusal: status, title, detail and when to retry; its detail
	 * must name nothing a caller without a token may not see
	 * @throws IOException when the answer cannot be written
	 */
	public static void write(HttpServletRequest request, HttpServletResponse response, SampleException refusal)
			throws IOException {
		Long retryAfter = refusal.retryAfterSeconds();
		if (retryAfter != null) {
			response.setHeader(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter));
		}
		write(request, response, refusal.status(), refusal.title(), String.valueOf(refusal.getMessage()));
	}

	static void write(HttpServletRequest request, HttpServletResponse response, HttpStatus status, String title,
			String detail) throws IOException {
		Map<String, Object> problem = new LinkedHashMap<>();
		problem.put("type", "about:blank");
		problem.put("title", title);
		problem.put("status", status.value());
		problem.put("detail", detail);
		problem.put("instance", request.getRequestURI());
		byte[] json = JsonMapper.shared().writeValueAsBytes(problem);
		response.setStatus(status.value());
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		response.setContentLength(json.length);
		response.getOutputStream().write(json);
		response.flushBuffer();
	}

}
