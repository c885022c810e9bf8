package dev.nixl4j.kv;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;

/**
 * A paged KV cache that cannot fit in the memory this process can have beside the largest
 * heap the JVM may grow: {@link PagedKvCache#allocate} refuses it before anything is
 * allocated, instead of ending in an {@link OutOfMemoryError} or the kernel's OOM killer
 * after gigabytes of touched pages. Status {@link NixlStatus#ERROR_INVALID_PARAM}; the
 * message names the cache's size, its shape, the memory limit and where it comes from,
 * the heap, and how many blocks of the layout would fit.
 */
public class KvCacheTooLargeException extends NixlException {

	private static final long serialVersionUID = 1L;

	private final long cacheBytes;

	private final long availableBytes;

	/**
	 * Creates the exception.
	 * @param agent the agent the cache was for
	 * @param detail what does not fit
	 * @param cacheBytes the size of the cache
	 * @param availableBytes the memory left beside the heap
	 */
	public KvCacheTooLargeException(String agent, String detail, long cacheBytes, long availableBytes) {
		super(NixlStatus.ERROR_INVALID_PARAM, "kv_allocate", agent, null, detail);
		this.cacheBytes = cacheBytes;
		this.availableBytes = availableBytes;
	}

	/**
	 * Returns the size of the cache that was asked for.
	 * @return its bytes
	 */
	public long cacheBytes() {
		return this.cacheBytes;
	}

	/**
	 * Returns the memory this process can have beside the largest heap.
	 * @return the bytes, 0 when the heap may take it all
	 */
	public long availableBytes() {
		return this.availableBytes;
	}

}
