package dev.nixl4j.connect;

import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;

/**
 * The side that moves the data: it checks that its descriptors pair with the peer's
 * {@link RdmaMetadata}, registers its memory, loads the peer's agent metadata (shared,
 * reference counted, by the connector) and posts one transfer whose notification is the
 * peer's key. It completes when the transfer does, and ends
 * {@link OperationStatus#ERRORED} with the transfer's failure otherwise.
 */
public abstract sealed class ActiveOperation extends Operation permits ReadOperation, WriteOperation {

	private final XferOp op;

	private final RdmaMetadata remote;

	private @Nullable List<Registration> registrations;

	private @Nullable Transfer transfer;

	ActiveOperation(Connector connector, String name, XferOp op, RdmaMetadata remote,
			List<Descriptor> localDescriptors) {
		super(connector, name, localDescriptors);
		this.op = op;
		this.remote = remote;
	}

	/**
	 * Checks the pairing, registers, loads the peer and posts; the connector calls it
	 * once.
	 */
	@Override
	synchronized void start() {
		requireNotEnded();
		OperationKind expected = (this.op == XferOp.READ) ? OperationKind.READ : OperationKind.WRITE;
		if (this.remote.operationKind() != expected) {
			throw failure(NixlStatus.ERROR_INVALID_PARAM, "a " + this.op.name().toLowerCase() + " pairs only with a "
					+ ((expected == OperationKind.READ) ? "readable" : "writable") + " operation (operation_kind "
					+ expected.code() + " " + expected + "), but the metadata is of a "
					+ ((this.remote.operationKind() == OperationKind.READ) ? "readable" : "writable")
					+ " operation (operation_kind " + this.remote.operationKind().code() + ")");
		}
		List<Descriptor> local = localDescriptors();
		List<Descriptor> remoteDescriptors = this.remote.descriptors();
		if (local.size() != remoteDescriptors.size()) {
			throw failure(NixlStatus.ERROR_INVALID_PARAM,
					"descriptor counts differ: " + local.size() + " local, " + remoteDescriptors.size() + " remote");
		}
		for (int i = 0; i < local.size(); i++) {
			if (local.get(i).size() != remoteDescriptors.get(i).size()) {
				throw failure(NixlStatus.ERROR_INVALID_PARAM, "descriptor sizes differ at index " + i + ": "
						+ local.get(i).size() + " bytes local, " + remoteDescriptors.get(i).size() + " bytes remote");
			}
		}
		Connector connector = connector();
		this.registrations = connector.register(operationName(), local);
		advance(OperationStatus.INITIALIZED);
		MemoryType localType = local.get(0).device().memoryType();
		DescriptorList localList = new DescriptorList(localType,
				local.stream().map(Descriptor::toMemoryDescriptor).toList());
		RemoteAgents.Started started = connector.remoteAgents()
			.begin(operationName(), this.remote, this.op, localList,
					this.remote.notificationKey().getBytes(StandardCharsets.UTF_8));
		peer(started.peer());
		this.transfer = started.transfer();
		advance(OperationStatus.IN_PROGRESS);
		started.transfer().completion().whenComplete((done, error) -> {
			if (error == null) {
				finish(OperationStatus.COMPLETE, null);
			}
			else {
				Throwable cause = (error.getCause() != null && !(error instanceof NixlException)) ? error.getCause()
						: error;
				NixlStatus status = (cause instanceof NixlException nixl) ? nixl.status() : NixlStatus.UNKNOWN;
				if (status == NixlStatus.ERROR_BACKEND) {
					connector.remoteAgents().disconnected(started.peer());
				}
				finish(OperationStatus.ERRORED, failure(status,
						"the " + this.op.name().toLowerCase() + " transfer failed: " + cause.getMessage(), cause));
			}
		});
	}

	/**
	 * Returns the peer's metadata this operation pairs with.
	 * @return the metadata
	 */
	public RdmaMetadata remoteMetadata() {
		return this.remote;
	}

	@Override
	public String notificationKey() {
		return this.remote.notificationKey();
	}

	@Override
	void release() {
		RuntimeException problem = null;
		Transfer current = this.transfer;
		this.transfer = null;
		if (current != null) {
			try {
				current.close();
			}
			catch (RuntimeException ex) {
				problem = ex;
			}
		}
		List<Registration> held = this.registrations;
		this.registrations = null;
		if (held != null) {
			try {
				Connector.closeAll(held);
			}
			catch (RuntimeException ex) {
				problem = add(problem, ex);
			}
		}
		String remoteAgent = remoteAgentName();
		if (current != null && remoteAgent != null) {
			try {
				connector().remoteAgents().release(remoteAgent);
			}
			catch (RuntimeException ex) {
				problem = add(problem, ex);
			}
		}
		if (problem != null) {
			throw problem;
		}
	}

	private static RuntimeException add(@Nullable RuntimeException first, RuntimeException next) {
		if (first == null) {
			return next;
		}
		first.addSuppressed(next);
		return first;
	}

}
