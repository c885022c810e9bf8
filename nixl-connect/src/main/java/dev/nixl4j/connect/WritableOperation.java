package dev.nixl4j.connect;

import java.time.Duration;
import java.util.List;

/**
 * Local memory that a peer may write: pairs only with a {@link WriteOperation} on the
 * other side ({@code operation_kind} WRITE). Created by
 * {@link Connector#createWritable(List, Duration)}; it completes when the writer's
 * notification arrives, which NIXL delivers after the data landed.
 */
public final class WritableOperation extends PassiveOperation {

	WritableOperation(Connector connector, List<Descriptor> localDescriptors, Duration lease) {
		super(connector, "create_writable", OperationKind.WRITE, localDescriptors, lease);
	}

}
