/**
 * A user's application on the module path: it reads nixl-core's API by its module name.
 */
module com.example.modular {

	requires dev.nixl4j.core;

}
