package com.example.kvsession;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

import dev.nixl4j.kv.BlockAllocator;
import dev.nixl4j.kv.PagedKvCache;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * For tests only, and only with {@code app.allow-corruption=true}: {@code POST /corrupt}
 * flips the first byte of the first leased block of a request, so that a consumer's
 * CRC32C check has something to find.
 */
@RestController
@Profile("producer")
@ConditionalOnBooleanProperty("app.allow-corruption")
class CorruptionController {

	private final PagedKvCache cache;

	private final LeasedRequests leased;

	private final AccessToken token;

	CorruptionController(PagedKvCache cache, LeasedRequests leased, AccessToken token) {
		this.cache = cache;
		this.leased = leased;
		this.token = token;
	}

	/**
	 * Flips the first byte of region 0 of the request's first block while its lease holds
	 * it.
	 * @param authorization the bearer token
	 * @param request the request
	 * @return what was flipped, or a problem
	 */
	@PostMapping("/corrupt")
	ResponseEntity<?> corrupt(@RequestHeader(name = "Authorization", required = false) String authorization,
			@RequestBody CorruptRequest request) {
		this.token.require(authorization);
		LeasedRequests.FirstBlock first = (request.requestId() != null) ? this.leased.firstBlock(request.requestId())
				: null;
		if (first == null) {
			return Problems.of(HttpStatus.NOT_FOUND, "UnknownRequest", "no lease of request '" + request.requestId()
					+ "' is remembered");
		}
		BlockAllocator allocator = this.cache.allocator();
		synchronized (allocator) {
			boolean held = allocator.references(first.blockId()) > 0
					&& allocator.generation(first.blockId()) == first.generation();
			if (!held) {
				return Problems.of(HttpStatus.CONFLICT, "LeaseEnded",
						"the lease of request '" + request.requestId() + "' no longer holds its blocks");
			}
			MemorySegment block = this.cache.block(0, first.blockId());
			block.set(ValueLayout.JAVA_BYTE, 0, (byte) ~block.get(ValueLayout.JAVA_BYTE, 0));
		}
		return ResponseEntity.ok(Map.of("requestId", request.requestId(), "blockId", first.blockId(), "region", 0,
				"offset", 0));
	}

	/**
	 * A corruption asked for.
	 *
	 * @param requestId the leased request
	 */
	record CorruptRequest(String requestId) {
	}

}
