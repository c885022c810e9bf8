package dev.nixl4j.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.nixl4j.metadata.MetadataFraming;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;

/**
 * What an agent knows of the peers whose metadata it loaded: their connection information
 * and the memory they registered, by peer name. Metadata loaded some other way (for
 * example NIXL's own etcd exchange) is not here and is left to NIXL to check.
 */
final class RemoteMemory {

	private final Map<String, MetadataFraming.ParsedMetadata> remotes = new ConcurrentHashMap<>();

	private final DescriptorChecks checks;

	RemoteMemory(DescriptorChecks checks) {
		this.checks = checks;
	}

	/** Records metadata the engine loaded for a peer. */
	void loaded(String remoteAgent, MetadataFraming.ParsedMetadata parsed) {
		this.remotes.merge(remoteAgent, parsed, RemoteMemory::update);
	}

	/**
	 * Full metadata (it carries connection information) replaces what was known of a
	 * peer; partial metadata adds the sections it describes.
	 */
	private static MetadataFraming.ParsedMetadata update(MetadataFraming.ParsedMetadata known,
			MetadataFraming.ParsedMetadata loaded) {
		if (!loaded.connections().isEmpty()) {
			return loaded;
		}
		List<MetadataFraming.MemorySection> sections = new ArrayList<>(known.sections());
		sections.addAll(loaded.sections());
		return new MetadataFraming.ParsedMetadata(known.agentName(), known.connections(), sections);
	}

	boolean knows(String remoteAgent) {
		return this.remotes.containsKey(remoteAgent);
	}

	void forget(String remoteAgent) {
		this.remotes.remove(remoteAgent);
	}

	List<String> agents() {
		return List.copyOf(this.remotes.keySet());
	}

	/**
	 * Checks remote descriptors against the metadata loaded through this agent. A peer
	 * not known here is left to NIXL to check.
	 */
	void check(String operation, String remoteAgent, DescriptorList remote) {
		MetadataFraming.ParsedMetadata parsed = this.remotes.get(remoteAgent);
		if (parsed == null) {
			return;
		}
		List<MemoryDescriptor> descriptors = remote.descriptors();
		for (int i = 0; i < descriptors.size(); i++) {
			MemoryDescriptor descriptor = descriptors.get(i);
			if (!parsed.covers(null, remote.memoryType().code(), descriptor.address(), descriptor.length(),
					descriptor.deviceId())) {
				throw this.checks.invalid(operation, remoteAgent, "remote descriptor " + i + " (" + descriptor + ", "
						+ remote.memoryType() + ") is not inside memory that '" + remoteAgent + "' registered");
			}
		}
	}

}
