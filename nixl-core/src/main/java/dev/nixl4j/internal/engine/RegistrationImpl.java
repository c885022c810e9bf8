package dev.nixl4j.internal.engine;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;

/**
 * Registered memory plus the count of transfers in flight that use it. The segments are
 * held so that memory handed to the engine stays reachable while it is registered.
 */
final class RegistrationImpl implements Registration {

	/** The bit of {@link #state} that says the registration was closed. */
	private static final int CLOSED = Integer.MIN_VALUE;

	private final AgentCore agent;

	private final DescriptorList regions;

	private final long handle;

	@SuppressWarnings("unused") // reachability: the engine holds raw addresses of these
								// segments
	private final List<MemorySegment> segments;

	/**
	 * The count of transfers in flight over this memory, with {@link #CLOSED} set once it
	 * was closed: one atomic word, so that a post takes and gives back its share with one
	 * atomic operation each, and closing sees the count and closes in one step.
	 */
	private final AtomicInteger state = new AtomicInteger();

	RegistrationImpl(AgentCore agent, DescriptorList regions, long handle, List<MemorySegment> segments) {
		this.agent = agent;
		this.regions = regions;
		this.handle = handle;
		this.segments = segments;
	}

	long handle() {
		return this.handle;
	}

	@Override
	public MemoryType memoryType() {
		return this.regions.memoryType();
	}

	@Override
	public DescriptorList regions() {
		return this.regions;
	}

	boolean contains(MemoryType type, MemoryDescriptor descriptor) {
		if (type != this.regions.memoryType()) {
			return false;
		}
		for (MemoryDescriptor region : this.regions.descriptors()) {
			if (descriptor.isInside(region)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Marks one more transfer in flight over this memory.
	 * @return {@code false} if the registration was closed meanwhile
	 */
	boolean acquire() {
		while (true) {
			int current = this.state.get();
			if ((current & CLOSED) != 0) {
				return false;
			}
			if (this.state.compareAndSet(current, current + 1)) {
				return true;
			}
		}
	}

	void releaseOne() {
		this.state.getAndDecrement();
	}

	@Override
	public int inFlightTransfers() {
		return this.state.get() & ~CLOSED;
	}

	@Override
	public boolean isOpen() {
		return (this.state.get() & CLOSED) == 0;
	}

	@Override
	public void close() {
		while (true) {
			int current = this.state.get();
			if ((current & CLOSED) != 0) {
				return;
			}
			if (current > 0) {
				throw new NixlException(NixlStatus.BUSY, "deregister_mem", this.agent.name(), null,
						current + " transfer(s) using this memory are in flight; wait for them or cancel them first");
			}
			if (this.state.compareAndSet(current, CLOSED)) {
				break;
			}
		}
		this.agent.deregister(this);
	}

	/** Closes during agent shutdown, after every transfer was cancelled. */
	void forceClose() {
		while (true) {
			int current = this.state.get();
			if ((current & CLOSED) != 0) {
				return;
			}
			if (this.state.compareAndSet(current, current | CLOSED)) {
				break;
			}
		}
		this.agent.deregister(this);
	}

	@Override
	public String toString() {
		return "Registration[" + this.regions.memoryType() + ", " + this.regions.size() + " region(s), " + byteSize()
				+ " bytes]";
	}

}
