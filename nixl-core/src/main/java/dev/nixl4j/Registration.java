package dev.nixl4j;

/**
 * Memory registered with an agent. Closing it deregisters the memory; that is refused
 * with {@link NixlStatus#BUSY} while a transfer that uses it is in flight. Closing twice
 * is harmless.
 *
 * <p>
 * Memory given as {@link java.lang.foreign.MemorySegment}s is kept reachable by the
 * registration; the arena that owns it must stay open until the registration is closed.
 */
public interface Registration extends AutoCloseable {

	/**
	 * Returns the memory type.
	 * @return the type
	 */
	MemoryType memoryType();

	/**
	 * Returns the registered regions.
	 * @return the regions
	 */
	DescriptorList regions();

	/**
	 * Returns the registered bytes.
	 * @return total bytes
	 */
	default long byteSize() {
		return regions().totalBytes();
	}

	/**
	 * Returns the number of transfers using this memory that are in flight now.
	 * @return the count
	 */
	int inFlightTransfers();

	/**
	 * Whether the registration is still open.
	 * @return {@code false} once closed
	 */
	boolean isOpen();

	/**
	 * Deregisters the memory.
	 * @throws NixlException with {@link NixlStatus#BUSY} while a transfer using it is in
	 * flight
	 */
	@Override
	void close();

}
