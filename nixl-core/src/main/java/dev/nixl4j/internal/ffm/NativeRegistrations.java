package dev.nixl4j.internal.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;

import static dev.nixl4j.internal.ffm.NativeCalls.SUCCESS;
import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * Memory registration of one native agent. A registration's handle is the address of the
 * registration descriptor list it was made with: deregistering needs the same list.
 */
final class NativeRegistrations {

	private static final MemorySegment NULL = MemorySegment.NULL;

	private final String name;

	private final MemorySegment agent;

	NativeRegistrations(String name, MemorySegment agent) {
		this.name = name;
		this.agent = agent;
	}

	long register(DescriptorList regions) {
		MemorySegment dlist = regDlist(regions);
		try {
			int rc = (int) Capi.REGISTER_MEM.invokeExact(this.agent, dlist, NULL);
			if (rc != SUCCESS) {
				int ignored = (int) Capi.DESTROY_REG_DLIST.invokeExact(dlist);
				check(rc, "register_mem",
						"NIXL refused to register " + regions.size() + " " + regions.memoryType() + " region(s) of "
								+ regions.totalBytes() + " bytes; no backend of this agent supports "
								+ regions.memoryType() + ", or the backend failed (see NIXL's log above)");
			}
			return dlist.address();
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "register_mem", this.name, null);
		}
	}

	void deregister(long registration) {
		MemorySegment dlist = MemorySegment.ofAddress(registration);
		try {
			int rc = (int) Capi.DEREGISTER_MEM.invokeExact(this.agent, dlist, NULL);
			int ignored = (int) Capi.DESTROY_REG_DLIST.invokeExact(dlist);
			check(rc, "deregister_mem", "NIXL could not deregister the memory");
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "deregister_mem", this.name, null);
		}
	}

	/**
	 * Creates a registration descriptor list of the regions; the caller destroys it.
	 * @param regions the regions
	 * @return the list
	 */
	MemorySegment regDlist(DescriptorList regions) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.CREATE_REG_DLIST.invokeExact(regions.memoryType().code(), out), "create_reg_dlist", "");
			MemorySegment dlist = out.get(ADDRESS, 0);
			for (MemoryDescriptor region : regions.descriptors()) {
				int rc = (int) Capi.REG_DLIST_ADD_DESC.invokeExact(dlist, region.address(), region.length(),
						region.deviceId(), NULL, 0L);
				if (rc != SUCCESS) {
					int ignored = (int) Capi.DESTROY_REG_DLIST.invokeExact(dlist);
					check(rc, "reg_dlist_add_desc", region.toString());
				}
			}
			return dlist;
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "create_reg_dlist", this.name, null);
		}
	}

	void destroyRegDlist(MemorySegment dlist) {
		try {
			int ignored = (int) Capi.DESTROY_REG_DLIST.invokeExact(dlist);
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "destroy_reg_dlist", this.name, null);
		}
	}

	private void check(int rc, String operation, String detail) {
		NativeCalls.check(rc, operation, this.name, null, detail);
	}

}
