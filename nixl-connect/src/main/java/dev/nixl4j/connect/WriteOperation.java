package dev.nixl4j.connect;

import java.util.List;

import dev.nixl4j.XferOp;

/**
 * Writes local memory into a peer's writable memory: pairs only with a
 * {@link WritableOperation} ({@code operation_kind} WRITE). Created by
 * {@link Connector#beginWrite(RdmaMetadata, List)}.
 */
public final class WriteOperation extends ActiveOperation {

	WriteOperation(Connector connector, RdmaMetadata remote, List<Descriptor> localDescriptors) {
		super(connector, "begin_write", XferOp.WRITE, remote, localDescriptors);
	}

}
