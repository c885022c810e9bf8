package dev.nixl4j.sample.decode;

import dev.nixl4j.sample.SampleApplication;
import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;

import org.springframework.context.annotation.Profile;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The decode worker's API.
 */
@RestController
@Profile(SampleApplication.DECODE)
class DecodeController {

	private final DecodeService service;

	DecodeController(DecodeService service) {
		this.service = service;
	}

	@PostMapping("/generate")
	GenerateResponse generate(@RequestBody GenerateRequest request) {
		return this.service.generate(request);
	}

}
