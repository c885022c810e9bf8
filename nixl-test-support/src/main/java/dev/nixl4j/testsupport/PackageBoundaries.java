package dev.nixl4j.testsupport;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The package boundaries of nixl4j, for the boundary tests of every module: which
 * packages are the public API, and where the implementation lives.
 */
public final class PackageBoundaries {

	/** nixl-core's packages that users may depend on, exported to every module. */
	public static final List<String> CORE_API_PACKAGES = List.of("dev.nixl4j", "dev.nixl4j.metadata",
			"dev.nixl4j.readiness", "dev.nixl4j.lifecycle", "dev.nixl4j.cuda");

	/**
	 * The packages users may depend on, in every module; they depend on no implementation
	 * package.
	 */
	public static final List<String> API_PACKAGES = List.of("dev.nixl4j", "dev.nixl4j.metadata",
			"dev.nixl4j.metadata.etcd", "dev.nixl4j.metadata.http", "dev.nixl4j.connect", "dev.nixl4j.kv",
			"dev.nixl4j.readiness", "dev.nixl4j.lifecycle", "dev.nixl4j.cuda");

	/**
	 * nixl-core's strict JSON reader and writer: shared with nixl4j's own modules (a
	 * qualified export), not API.
	 */
	public static final String SHARED_JSON = "dev.nixl4j.json";

	/**
	 * The implementation packages (and all below): not API, never used outside nixl4j's
	 * modules.
	 */
	public static final String INTERNAL = "dev.nixl4j.internal..";

	private PackageBoundaries() {
	}

	/**
	 * Checks the module descriptor of one of nixl4j's named modules beside nixl-core: its
	 * name, that it exports the package of the given type to every module and nothing
	 * else, opens nothing, and requires {@code dev.nixl4j.core}.
	 * @param type a type of the module's one API package
	 * @param moduleName the module's expected name
	 * @throws AssertionError naming what differs
	 */
	public static void requireApiModule(Class<?> type, String moduleName) {
		ModuleDescriptor module = descriptorOf(type);
		List<String> problems = new ArrayList<>();
		if (!module.name().equals(moduleName)) {
			problems.add("its name is " + module.name());
		}
		List<String> exported = module.exports()
			.stream()
			.map((exports) -> exports.source() + (exports.isQualified() ? " to " + exports.targets() : ""))
			.sorted()
			.toList();
		if (!exported.equals(List.of(type.getPackageName()))) {
			problems.add("it exports " + exported + " instead of [" + type.getPackageName() + "] alone");
		}
		if (!module.opens().isEmpty()) {
			problems.add("it opens " + module.opens());
		}
		if (module.requires().stream().noneMatch((requires) -> requires.name().equals("dev.nixl4j.core"))) {
			problems.add("it does not require dev.nixl4j.core");
		}
		if (!problems.isEmpty()) {
			throw new AssertionError("module " + moduleName + ": " + String.join("; ", problems));
		}
	}

	/**
	 * Reads the module descriptor of the compiled classes (or jar) that hold a type.
	 * @param type a type of the module
	 * @return its descriptor
	 * @throws AssertionError when they hold no {@code module-info.class}
	 */
	public static ModuleDescriptor descriptorOf(Class<?> type) {
		Path classes;
		try {
			classes = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
		}
		catch (URISyntaxException ex) {
			throw new AssertionError("no location of " + type, ex);
		}
		return ModuleFinder.of(classes)
			.findAll()
			.stream()
			.map(ModuleReference::descriptor)
			.findFirst()
			.orElseThrow(() -> new AssertionError("no module-info.class in " + classes));
	}

}
