package dev.nixl4j.internal.engine;

import java.util.List;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.PreparedList;
import org.jspecify.annotations.Nullable;

/**
 * A prepared descriptor list and, for a local one, the registrations its descriptors lie
 * in.
 */
final class PreparedListImpl implements PreparedList {

	private final AgentCore agent;

	private final @Nullable String remoteAgent;

	private final DescriptorList descriptors;

	private final List<RegistrationImpl> registrations;

	private long handle;

	PreparedListImpl(AgentCore agent, @Nullable String remoteAgent, DescriptorList descriptors,
			List<RegistrationImpl> registrations, long handle) {
		this.agent = agent;
		this.remoteAgent = remoteAgent;
		this.descriptors = descriptors;
		this.registrations = registrations;
		this.handle = handle;
	}

	@Override
	public @Nullable String remoteAgent() {
		return this.remoteAgent;
	}

	@Override
	public DescriptorList descriptors() {
		return this.descriptors;
	}

	List<RegistrationImpl> registrations() {
		return this.registrations;
	}

	synchronized long handle(String operation) {
		if (this.handle == 0) {
			throw new NixlException(NixlStatus.CLOSED, operation, this.agent.name(), this.remoteAgent,
					"the prepared list was closed");
		}
		return this.handle;
	}

	@Override
	public void close() {
		long released;
		synchronized (this) {
			released = this.handle;
			this.handle = 0;
		}
		if (released != 0) {
			this.agent.releasePrepared(this, released);
		}
	}

	@Override
	public String toString() {
		return "PreparedList[" + ((this.remoteAgent != null) ? "remote '" + this.remoteAgent + "'" : "local") + ", "
				+ this.descriptors.size() + " descriptor(s)]";
	}

}
