package dev.nixl4j.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.PreparedList;
import dev.nixl4j.Registration;
import org.jspecify.annotations.Nullable;

/**
 * The checks in Java of an agent's descriptor arguments, made before any engine call:
 * local descriptors inside this agent's registered memory, matching local and remote
 * pairs, prepared lists and indices of this agent. A refused argument is
 * {@link NixlStatus#ERROR_INVALID_PARAM} (or {@link IllegalArgumentException}) naming
 * what was wrong.
 */
final class DescriptorChecks {

	private final String agentName;

	private final List<RegistrationImpl> registrations;

	private final Set<PreparedListImpl> preparedLists;

	/**
	 * Creates the checks over the agent's live collections.
	 * @param agentName the agent's name, for errors
	 * @param registrations the agent's registrations
	 * @param preparedLists the agent's open prepared lists
	 */
	DescriptorChecks(String agentName, List<RegistrationImpl> registrations, Set<PreparedListImpl> preparedLists) {
		this.agentName = agentName;
		this.registrations = registrations;
		this.preparedLists = preparedLists;
	}

	/**
	 * Returns the regions of open registrations of this agent, all of one memory type.
	 */
	DescriptorList partialMetadataRegions(Registration... registrations) {
		if (registrations.length == 0) {
			throw new IllegalArgumentException("partial metadata needs at least one registration");
		}
		List<MemoryDescriptor> regions = new ArrayList<>();
		MemoryType type = registrations[0].memoryType();
		for (int i = 0; i < registrations.length; i++) {
			if (!(registrations[i] instanceof RegistrationImpl impl) || !this.registrations.contains(impl)) {
				throw new IllegalArgumentException(
						"registration " + i + " is not an open registration of agent '" + this.agentName + "'");
			}
			if (impl.memoryType() != type) {
				throw new IllegalArgumentException("partial metadata covers one memory type; registration " + i + " is "
						+ impl.memoryType() + ", registration 0 is " + type);
			}
			regions.addAll(impl.regions().descriptors());
		}
		return new DescriptorList(type, regions);
	}

	PreparedListImpl ownList(String operation, PreparedList list, boolean remote) {
		if (!(list instanceof PreparedListImpl impl) || !this.preparedLists.contains(impl)) {
			throw invalid(operation, null, "the prepared list is not an open list of agent '" + this.agentName + "'");
		}
		if (remote != (impl.remoteAgent() != null)) {
			throw invalid(operation, impl.remoteAgent(),
					"expected a " + (remote ? "remote" : "local") + " prepared list, got " + impl);
		}
		return impl;
	}

	static List<MemoryDescriptor> select(String operation, @Nullable String remoteAgent, String side,
			PreparedListImpl list, int[] indices) {
		List<MemoryDescriptor> descriptors = list.descriptors().descriptors();
		List<MemoryDescriptor> selected = new ArrayList<>(indices.length);
		for (int i = 0; i < indices.length; i++) {
			int index = indices[i];
			if (index < 0 || index >= descriptors.size()) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, remoteAgent,
						side + " index " + i + " is " + index + ", outside the prepared list of " + descriptors.size()
								+ " descriptor(s)");
			}
			selected.add(descriptors.get(index));
		}
		return selected;
	}

	void checkPairs(String operation, @Nullable String remoteAgent, List<MemoryDescriptor> local,
			List<MemoryDescriptor> remote) {
		if (local.size() != remote.size()) {
			throw invalid(operation, remoteAgent,
					"local and remote descriptor counts differ: " + local.size() + " vs " + remote.size());
		}
		for (int i = 0; i < local.size(); i++) {
			if (local.get(i).length() != remote.get(i).length()) {
				throw invalid(operation, remoteAgent, "descriptor " + i + " differs in length: local "
						+ local.get(i).length() + " vs remote " + remote.get(i).length() + " bytes");
			}
		}
	}

	/**
	 * Finds the registration of every local descriptor; refuses descriptors outside them.
	 */
	List<RegistrationImpl> localRegistrations(String operation, DescriptorList local) {
		List<RegistrationImpl> found = new ArrayList<>(2);
		List<MemoryDescriptor> descriptors = local.descriptors();
		RegistrationImpl last = null;
		for (int i = 0; i < descriptors.size(); i++) {
			MemoryDescriptor descriptor = descriptors.get(i);
			if (last == null || !last.contains(local.memoryType(), descriptor)) {
				last = findRegistration(local.memoryType(), descriptor);
				if (last == null) {
					throw invalid(operation, null, "local descriptor " + i + " (" + descriptor + ", "
							+ local.memoryType() + ") is not inside memory registered with this agent");
				}
				if (!found.contains(last)) {
					found.add(last);
				}
			}
		}
		return found;
	}

	private @Nullable RegistrationImpl findRegistration(MemoryType type, MemoryDescriptor descriptor) {
		for (RegistrationImpl registration : this.registrations) {
			if (registration.isOpen() && registration.contains(type, descriptor)) {
				return registration;
			}
		}
		return null;
	}

	NixlException invalid(String operation, @Nullable String remoteAgent, String detail) {
		return new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, this.agentName, remoteAgent, detail);
	}

}
