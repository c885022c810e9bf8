/**
 * A user's module that tries to compile against nixl-core's internal packages.
 */
module com.example.intruder {

	requires dev.nixl4j.core;

}
