package com.example.kvsession;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.context.annotation.Profile;
import org.springframework.stereotype.Component;

/**
 * The first block of the most recent leases, by request id, so that {@code /corrupt} can
 * find it; at most {@value #MAX} requests are remembered.
 */
@Component
@Profile("producer")
class LeasedRequests {

	private static final int MAX = 1024;

	private final Map<String, FirstBlock> requests = new LinkedHashMap<>(16, 0.75f, false) {

		@Override
		protected boolean removeEldestEntry(Map.Entry<String, FirstBlock> eldest) {
			return size() > MAX;
		}

	};

	synchronized void remember(String requestId, int blockId, long generation) {
		this.requests.put(requestId, new FirstBlock(blockId, generation));
	}

	synchronized FirstBlock firstBlock(String requestId) {
		return this.requests.get(requestId);
	}

	/**
	 * A leased request's first block and its generation when it was leased.
	 *
	 * @param blockId the block
	 * @param generation its generation
	 */
	record FirstBlock(int blockId, long generation) {
	}

}
