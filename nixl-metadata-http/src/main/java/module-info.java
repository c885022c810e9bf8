/**
 * nixl-metadata-http: the HTTP metadata registry. {@link dev.nixl4j.metadata.http.MetadataHttpServer}
 * serves it on its own, {@link dev.nixl4j.metadata.http.MetadataRegistryHandler} serves it from any
 * HTTP server (the starter's servlet), and {@link dev.nixl4j.metadata.http.HttpMetadataExchange} is
 * the client an agent publishes and fetches with. Bearer tokens, owners of entries, quotas and
 * deadlines bound what any client can do. Exports {@code dev.nixl4j.metadata.http} only.
 */
module dev.nixl4j.metadata.http {

	requires transitive dev.nixl4j.core;

	requires static org.jspecify;

	requires java.net.http;

	exports dev.nixl4j.metadata.http;

}
