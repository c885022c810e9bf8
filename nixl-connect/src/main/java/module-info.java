/**
 * nixl-connect: Dynamo's {@code nixl_connect} operations in Java. A
 * {@link dev.nixl4j.connect.Connector} over one agent exposes memory
 * ({@code createReadable}, {@code createWritable}) and moves data ({@code beginRead},
 * {@code beginWrite}), with the operation's {@link dev.nixl4j.connect.RdmaMetadata} in
 * Dynamo's JSON. Exports {@code dev.nixl4j.connect} only.
 */
module dev.nixl4j.connect {

	requires transitive dev.nixl4j.core;

	requires static org.jspecify;

	exports dev.nixl4j.connect;

}
