package dev.nixl4j.sample.decode;

import java.util.concurrent.Semaphore;

import jakarta.servlet.http.HttpServletRequest;

import dev.nixl4j.sample.SampleApplication;
import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.SampleProperties;
import dev.nixl4j.sample.WorkerToken;
import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The decode worker's API. {@code POST /generate} is public, so it trusts its callers
 * little: it serves at most {@code sample.generate.max-concurrent-requests} requests at
 * once (503 at once beyond), and takes a request's own {@code requestId} and its
 * {@code decodeDelayMillis} only from a caller that presents the workers' bearer token
 * (403 for others), since a chosen id could take the id of another's request and a delay
 * holds the prefill worker's blocks.
 */
@RestController
@Profile(SampleApplication.DECODE)
class DecodeController {

	private final DecodeService service;

	private final WorkerToken token;

	private final int maxConcurrent;

	private final Semaphore inProgress;

	DecodeController(DecodeService service, WorkerToken token, SampleProperties properties) {
		this.service = service;
		this.token = token;
		this.maxConcurrent = properties.getGenerate().getMaxConcurrentRequests();
		if (this.maxConcurrent <= 0) {
			throw new IllegalStateException(
					"sample.generate.max-concurrent-requests must be positive, not " + this.maxConcurrent);
		}
		this.inProgress = new Semaphore(this.maxConcurrent);
	}

	@PostMapping("/generate")
	GenerateResponse generate(@RequestBody GenerateRequest request, HttpServletRequest http) {
		checkWorkerOnlyFields(request, http);
		if (!this.inProgress.tryAcquire()) {
			throw new SampleException(HttpStatus.SERVICE_UNAVAILABLE, "Too many requests", "the decode worker serves "
					+ this.maxConcurrent + " requests at once (sample.generate.max-concurrent-requests); retry later");
		}
		try {
			return this.service.generate(request);
		}
		finally {
			this.inProgress.release();
		}
	}

	private void checkWorkerOnlyFields(GenerateRequest request, HttpServletRequest http) {
		@Nullable String field = (request.requestId() != null) ? "requestId"
				: (request.decodeDelayMillis() != null) ? "decodeDelayMillis" : null;
		if (field != null && !this.token.isPresentedBy(http)) {
			throw new SampleException(HttpStatus.FORBIDDEN, "Field reserved to the workers", "field '" + field
					+ "' is accepted only with the workers' bearer token (Authorization: Bearer <sample.token>);"
					+ " leave it out: the decode worker makes an unpredictable request id and adds no delay");
		}
	}

}
