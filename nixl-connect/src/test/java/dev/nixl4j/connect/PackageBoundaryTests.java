package dev.nixl4j.connect;

import java.lang.module.ModuleDescriptor;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.nixl4j.testsupport.PackageBoundaries;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * nixl-connect uses nixl-core through its API only, and its module exports
 * {@code dev.nixl4j.connect} to every module and nothing else.
 */
class PackageBoundaryTests {

	@Test
	void usesNoImplementationPackageOfCore() {
		JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("dev.nixl4j.connect");
		assertThat(classes).as("nixl-connect's classes").isNotEmpty();
		noClasses().should()
			.dependOnClassesThat()
			.resideInAPackage(PackageBoundaries.INTERNAL)
			.because("only nixl-core's own packages may use its implementation")
			.check(classes);
	}

	@Test
	void theModuleExportsItsApiPackageOnly() {
		ModuleDescriptor module = PackageBoundaries.descriptorOf(Connector.class);
		assertThat(module.name()).isEqualTo("dev.nixl4j.connect");
		assertThat(module.exports()).as("exported packages").singleElement().satisfies((exports) -> {
			assertThat(exports.source()).isEqualTo("dev.nixl4j.connect");
			assertThat(exports.isQualified()).isFalse();
		});
		assertThat(module.opens()).as("open packages").isEmpty();
		assertThat(module.requires().stream().map(ModuleDescriptor.Requires::name)).contains("dev.nixl4j.core");
	}

}
