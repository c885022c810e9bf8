package com.example.kvsession;

import java.time.Duration;

import dev.nixl4j.NixlException;
import dev.nixl4j.kv.BlockAllocator;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.KvTransferParams;
import dev.nixl4j.kv.PagedKvCache;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Profile;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * The producer role: {@code POST /lease} fills a request's blocks with
 * {@link KvPattern} and leases them, answering the lease's {@link KvTransferParams}.
 */
@RestController
@Profile("producer")
class ProducerController {

	/** The most blocks one request may lease. */
	static final int MAX_BLOCKS = 64;

	private final PagedKvCache cache;

	private final KvProducer producer;

	private final LeasedRequests leased;

	private final AccessToken token;

	private final Duration leaseTtl;

	ProducerController(PagedKvCache cache, KvProducer producer, LeasedRequests leased, AccessToken token,
			@Value("${nixl.kv.lease-ttl:30s}") Duration leaseTtl) {
		this.cache = cache;
		this.producer = producer;
		this.leased = leased;
		this.token = token;
		this.leaseTtl = leaseTtl;
	}

	/**
	 * Allocates, fills and leases a request's blocks. The lease holds them; this
	 * application gives its own references back at once.
	 * @param authorization the bearer token
	 * @param request the request
	 * @return the lease's parameters, or a problem
	 */
	@PostMapping("/lease")
	ResponseEntity<?> lease(@RequestHeader(name = "Authorization", required = false) String authorization,
			@RequestBody LeaseRequest request) {
		this.token.require(authorization);
		String problem = request.problem();
		if (problem != null) {
			return Problems.badRequest(problem);
		}
		BlockAllocator allocator = this.cache.allocator();
		try {
			int[] blocks = allocator.allocate(request.blocks());
			try {
				KvPattern.fill(this.cache, blocks, request.seed());
				KvLease lease = this.producer.lease(request.requestId(), blocks, 1, this.leaseTtl);
				this.leased.remember(request.requestId(), blocks[0], allocator.generation(blocks[0]));
				return ResponseEntity.ok(lease.params());
			}
			finally {
				allocator.release(blocks);
			}
		}
		catch (NixlException ex) {
			return Problems.of(ex);
		}
	}

	/**
	 * A lease asked for.
	 *
	 * @param requestId the request's id
	 * @param blocks how many blocks, 1 to {@value ProducerController#MAX_BLOCKS}
	 * @param seed the pattern's seed
	 */
	record LeaseRequest(String requestId, Integer blocks, Long seed) {

		String problem() {
			if (this.blocks == null || this.blocks < 1 || this.blocks > MAX_BLOCKS) {
				return "blocks must be between 1 and " + MAX_BLOCKS + ", was " + this.blocks;
			}
			if (this.seed == null) {
				return "seed is required";
			}
			try {
				KvTransferParams.requireRequestId(this.requestId);
				return null;
			}
			catch (IllegalArgumentException ex) {
				return "requestId: " + ex.getMessage();
			}
		}

	}

}
