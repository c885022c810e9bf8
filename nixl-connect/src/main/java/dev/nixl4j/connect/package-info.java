/**
 * The Dynamo-connect-style API: a {@link dev.nixl4j.connect.Connector} pairs operations
 * between workers. One side exposes memory with a
 * {@link dev.nixl4j.connect.ReadableOperation} or a
 * {@link dev.nixl4j.connect.WritableOperation} and hands its
 * {@link dev.nixl4j.connect.RdmaMetadata} (Dynamo's JSON wire format) to the other side,
 * which moves the data with a {@link dev.nixl4j.connect.ReadOperation} or a
 * {@link dev.nixl4j.connect.WriteOperation}. The passive side completes when the active
 * side's notification arrives.
 *
 * <p>
 * Every operation is {@link java.lang.AutoCloseable}, has an
 * {@link dev.nixl4j.connect.OperationStatus}, a future and an await with a deadline;
 * passive operations expire after a lease.
 */
@NullMarked
package dev.nixl4j.connect;

import org.jspecify.annotations.NullMarked;
