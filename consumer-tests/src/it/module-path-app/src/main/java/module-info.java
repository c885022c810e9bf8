/**
 * A user's application on the module path: it reads nixl4j's API by its modules' names.
 */
module com.example.modular {

	requires dev.nixl4j.core;

	requires dev.nixl4j.kv;

	requires dev.nixl4j.connect;

	requires dev.nixl4j.metadata.http;

}
