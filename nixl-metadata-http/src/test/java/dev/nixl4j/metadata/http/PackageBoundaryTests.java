package dev.nixl4j.metadata.http;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.nixl4j.testsupport.PackageBoundaries;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * nixl-metadata-http uses nixl-core through its API only, and its module exports
 * {@code dev.nixl4j.metadata.http} to every module and nothing else.
 */
class PackageBoundaryTests {

	@Test
	void usesNoImplementationPackageOfCore() {
		JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("dev.nixl4j.metadata.http");
		assertThat(classes).as("nixl-metadata-http's classes").isNotEmpty();
		noClasses().should()
			.dependOnClassesThat()
			.resideInAPackage(PackageBoundaries.INTERNAL)
			.because("only nixl-core's own packages may use its implementation")
			.check(classes);
	}

	@Test
	void theModuleExportsItsApiPackageOnly() {
		PackageBoundaries.requireApiModule(HttpMetadataExchange.class, "dev.nixl4j.metadata.http");
	}

}
