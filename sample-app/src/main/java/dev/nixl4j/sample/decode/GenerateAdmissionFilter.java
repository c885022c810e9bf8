package dev.nixl4j.sample.decode;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.web.ProblemAnswers;
import org.jspecify.annotations.Nullable;

import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Takes the request slot of a {@code POST /generate} from its caller's share
 * ({@link CallerShares#admitRequest}) before anything of the request is read, and gives
 * it back when the answer is made: a caller over its share, or a worker that is full, is
 * answered at once (429 or 503, with {@code Retry-After}), as cheaply as an answer can
 * be, so that a flood of refused requests costs the worker little. The controller takes
 * the request's blocks from the same share ({@link #admission}).
 */
final class GenerateAdmissionFilter extends OncePerRequestFilter {

	private static final String ADMISSION = GenerateAdmissionFilter.class.getName() + ".admission";

	private final CallerShares shares;

	GenerateAdmissionFilter(CallerShares shares) {
		this.shares = shares;
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return !"POST".equals(request.getMethod());
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		CallerShares.Admission admission;
		try {
			admission = this.shares.admitRequest(Caller.of(request));
		}
		catch (SampleException refused) {
			ProblemAnswers.write(request, response, refused);
			return;
		}
		request.setAttribute(ADMISSION, admission);
		try {
			chain.doFilter(request, response);
		}
		finally {
			admission.close();
		}
	}

	/**
	 * The share this filter took for a request.
	 * @param request the request
	 * @return the share, or {@code null} when the request did not pass this filter
	 */
	static CallerShares.@Nullable Admission admission(HttpServletRequest request) {
		return (request.getAttribute(ADMISSION) instanceof CallerShares.Admission admission) ? admission : null;
	}

}
