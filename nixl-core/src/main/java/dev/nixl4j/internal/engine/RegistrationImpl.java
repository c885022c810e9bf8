package dev.nixl4j.internal.engine;

import java.lang.foreign.MemorySegment;
import java.util.List;

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

	private final AgentCore agent;

	private final DescriptorList regions;

	private final long handle;

	@SuppressWarnings("unused") // reachability: the engine holds raw addresses of these
								// segments
	private final List<MemorySegment> segments;

	private int inFlight;

	private boolean open = true;

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
	synchronized boolean acquire() {
		if (!this.open) {
			return false;
		}
		this.inFlight++;
		return true;
	}

	synchronized void releaseOne() {
		this.inFlight--;
	}

	@Override
	public synchronized int inFlightTransfers() {
		return this.inFlight;
	}

	@Override
	public synchronized boolean isOpen() {
		return this.open;
	}

	@Override
	public void close() {
		synchronized (this) {
			if (!this.open) {
				return;
			}
			if (this.inFlight > 0) {
				throw new NixlException(NixlStatus.BUSY, "deregister_mem", this.agent.name(), null, this.inFlight
						+ " transfer(s) using this memory are in flight; wait for them or cancel them first");
			}
			this.open = false;
		}
		this.agent.deregister(this);
	}

	/** Closes during agent shutdown, after every transfer was cancelled. */
	void forceClose() {
		synchronized (this) {
			if (!this.open) {
				return;
			}
			this.open = false;
		}
		this.agent.deregister(this);
	}

	@Override
	public String toString() {
		return "Registration[" + this.regions.memoryType() + ", " + this.regions.size() + " region(s), " + byteSize()
				+ " bytes]";
	}

}
