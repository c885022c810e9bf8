package dev.nixl4j.connect;

import java.util.List;

import dev.nixl4j.XferOp;

/**
 * Reads a peer's readable memory into local memory: pairs only with a
 * {@link ReadableOperation} ({@code operation_kind} READ). Created by
 * {@link Connector#beginRead(RdmaMetadata, List)}.
 */
public final class ReadOperation extends ActiveOperation {

	ReadOperation(Connector connector, RdmaMetadata remote, List<Descriptor> localDescriptors) {
		super(connector, "begin_read", XferOp.READ, remote, localDescriptors);
	}

}
