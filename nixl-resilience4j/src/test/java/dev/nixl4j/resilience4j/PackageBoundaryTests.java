package dev.nixl4j.resilience4j;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.nixl4j.testsupport.PackageBoundaries;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * nixl-resilience4j is a plain integration: it uses nixl-core through its API only and
 * knows nothing of Spring or of the Boot layer that wires it.
 */
class PackageBoundaryTests {

	private final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.nixl4j.resilience4j");

	@Test
	void usesNoImplementationPackageOfCore() {
		assertThat(this.classes).as("nixl-resilience4j's classes").isNotEmpty();
		noClasses().should()
			.dependOnClassesThat()
			.resideInAPackage(PackageBoundaries.INTERNAL)
			.because("only nixl-core's own packages may use its implementation")
			.check(this.classes);
	}

	@Test
	void usesNeitherSpringNorTheAutoConfiguration() {
		noClasses().should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework..", "dev.nixl4j.autoconfigure..")
			.because("the Spring Boot auto-configuration wires this module, not the other way round")
			.check(this.classes);
	}

}
