package dev.nixl4j.connect;

import java.time.Duration;
import java.util.List;

/**
 * Local memory that a peer may read: pairs only with a {@link ReadOperation} on the other
 * side ({@code operation_kind} READ). Created by
 * {@link Connector#createReadable(List, Duration)}; it completes when the reader's
 * notification arrives, which NIXL sends after the data was read.
 */
public final class ReadableOperation extends PassiveOperation {

	ReadableOperation(Connector connector, List<Descriptor> localDescriptors, Duration lease) {
		super(connector, "create_readable", OperationKind.READ, localDescriptors, lease);
	}

}
