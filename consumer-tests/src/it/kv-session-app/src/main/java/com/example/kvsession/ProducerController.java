package com.example.kvsession;

import dev.nixl4j.NixlException;
import dev.nixl4j.kv.BlockAllocator;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.KvTransferParams;
import dev.nixl4j.kv.PagedKvCache;

import org.springframework.context.annotation.Profile;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * The producer role: {@code POST /lease} fills a request's blocks with
 * {@link KvPattern} and leases them, answering the lease's {@link KvTransferParams} in
 * their wire form ({@link KvTransferParams#toJson()}). The starter's producer gives each
 * lease {@code nixl.kv.lease-ttl}.
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

	ProducerController(PagedKvCache cache, KvProducer producer, LeasedRequests leased, AccessToken token) {
		this.cache = cache;
		this.producer = producer;
		this.leased = leased;
		this.token = token;
	}

	/**
	 * Allocates, fills and leases a request's blocks. The lease takes them over: they go
	 * back to the pool when it ends.
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
			KvLease lease;
			try {
				KvPattern.fill(this.cache, blocks, request.seed());
				lease = this.producer.lease(request.requestId(), blocks);
			}
			catch (RuntimeException ex) {
				allocator.release(blocks);
				throw ex;
			}
			this.leased.remember(request.requestId(), blocks[0], allocator.generation(blocks[0]));
			return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(lease.params().toJson());
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
