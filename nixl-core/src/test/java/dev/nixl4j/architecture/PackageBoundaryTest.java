package dev.nixl4j.architecture;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.testsupport.PackageBoundaries;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * nixl-core's package boundaries, checked on its compiled classes: the public API
 * packages depend on no implementation package, implementation lives under
 * {@code dev.nixl4j.internal}, and no two packages depend on each other in a cycle; the
 * module descriptor exports the API packages to everyone, and the JSON reader, the shared
 * metadata watch and the test-support seam only to the nixl4j modules that use them.
 */
class PackageBoundaryTest {

	private static JavaClasses core;

	@BeforeAll
	static void importCore() {
		core = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("dev.nixl4j");
		assertThat(core).as("nixl-core's classes").hasSizeGreaterThan(100);
	}

	@Test
	void theApiDependsOnNoImplementationPackage() {
		noClasses().that()
			.resideInAnyPackage(PackageBoundaries.API_PACKAGES.toArray(String[]::new))
			.should()
			.dependOnClassesThat()
			.resideInAPackage(PackageBoundaries.INTERNAL)
			.because("users compile against the API; the implementation may change in any release")
			.check(core);
	}

	@Test
	void everyPackageIsApiOrInternal() {
		String[] known = new String[PackageBoundaries.API_PACKAGES.size() + 2];
		for (int i = 0; i < PackageBoundaries.API_PACKAGES.size(); i++) {
			known[i] = PackageBoundaries.API_PACKAGES.get(i);
		}
		known[known.length - 2] = PackageBoundaries.SHARED_JSON;
		known[known.length - 1] = PackageBoundaries.INTERNAL;
		classes().should()
			.resideInAnyPackage(known)
			.because("a package is either promised to users or under dev.nixl4j.internal")
			.check(core);
	}

	@Test
	void packagesFormNoCycle() {
		slices().matching("dev.nixl4j.(**)").should().beFreeOfCycles().check(core);
	}

	@Test
	void theModuleExportsTheApiPackagesOnly() throws URISyntaxException {
		Path classes = Path.of(NixlAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		ModuleDescriptor module = ModuleFinder.of(classes)
			.findAll()
			.stream()
			.map(ModuleReference::descriptor)
			.findFirst()
			.orElseThrow(() -> new AssertionError("no module-info.class in " + classes));
		assertThat(module.name()).isEqualTo("dev.nixl4j.core");
		assertThat(module.exports()
			.stream()
			.filter((exports) -> !exports.isQualified())
			.map(ModuleDescriptor.Exports::source)).as("packages exported to every module")
			.containsExactlyInAnyOrderElementsOf(PackageBoundaries.CORE_API_PACKAGES);
		Map<String, Set<String>> qualified = module.exports()
			.stream()
			.filter(ModuleDescriptor.Exports::isQualified)
			.collect(Collectors.toMap(ModuleDescriptor.Exports::source, ModuleDescriptor.Exports::targets));
		assertThat(qualified).as("packages exported to named modules only")
			.isEqualTo(Map.of("dev.nixl4j.internal.engine", Set.of("dev.nixl4j.testsupport"),
					PackageBoundaries.SHARED_JSON,
					Set.of("dev.nixl4j.kv", "dev.nixl4j.connect", "dev.nixl4j.cli", "dev.nixl4j.etcd.launcher")));
		assertThat(module.opens()).as("open packages").isEmpty();
	}

}
