package dev.nixl4j.sample.decode;

import jakarta.servlet.http.HttpServletRequest;

import dev.nixl4j.sample.SampleApplication;
import dev.nixl4j.sample.SampleException;
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
 * little: each caller gets a share of the worker's requests and KV blocks, and callers
 * without a worker's token together a bounded part ({@link CallerShares}: 429 or 503 at
 * once beyond, with {@code Retry-After}); it takes a request's own {@code requestId} and
 * its {@code decodeDelayMillis} only from a caller that presents a worker's token (403
 * for others), since a chosen id could take the id of another's request and a delay holds
 * the prefill worker's blocks; and it names no agent and no library path to a caller
 * without a token ({@link GenerateResponse#withoutNames()}).
 */
@RestController
@Profile(SampleApplication.DECODE)
class DecodeController {

	private final DecodeService service;

	private final WorkerToken token;

	private final CallerShares shares;

	DecodeController(DecodeService service, WorkerToken token, CallerShares shares) {
		this.service = service;
		this.token = token;
		this.shares = shares;
	}

	@PostMapping("/generate")
	GenerateResponse generate(@RequestBody GenerateRequest request, HttpServletRequest http) {
		checkWorkerOnlyFields(request, http);
		int blocks = this.service.blocksFor(request);
		Caller caller = Caller.of(http);
		CallerShares.Admission taken = GenerateAdmissionFilter.admission(http);
		// the filter took the request's slot before its body was read, and gives it back
		try (CallerShares.Admission admission = (taken != null) ? taken : this.shares.admitRequest(caller)) {
			admission.takeBlocks(blocks);
			GenerateResponse response = this.service.generate(request);
			return caller.holdsToken() ? response : response.withoutNames();
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
