package dev.nixl4j.sample.prefill;

import dev.nixl4j.sample.SampleApplication;
import dev.nixl4j.sample.api.PrefillRequest;
import dev.nixl4j.sample.api.PrefillResponse;

import org.springframework.context.annotation.Profile;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The prefill worker's API, behind the bearer token
 * ({@link dev.nixl4j.sample.web.BearerTokenFilter}).
 */
@RestController
@Profile(SampleApplication.PREFILL)
class PrefillController {

	private final PrefillService service;

	PrefillController(PrefillService service) {
		this.service = service;
	}

	@PostMapping("/prefill")
	PrefillResponse prefill(@RequestBody PrefillRequest request) {
		return this.service.prefill(request);
	}

}
