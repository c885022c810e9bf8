package dev.nixl4j.autoconfigure;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.nixl4j.testsupport.PackageBoundaries;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * nixl-spring-boot-autoconfigure uses nixl-core through its API only: none of its classes
 * depends on {@code dev.nixl4j.internal}. Its metrics, resilience and tracing packages
 * only wire the plain integrations (nixl-micrometer, nixl-resilience4j): what needs no
 * Spring lives there.
 */
class PackageBoundaryTests {

	private final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.nixl4j.autoconfigure");

	@Test
	void usesNoImplementationPackageOfCore() {
		assertThat(this.classes).as("nixl-spring-boot-autoconfigure's classes").isNotEmpty();
		noClasses().should()
			.dependOnClassesThat()
			.resideInAPackage(PackageBoundaries.INTERNAL)
			.because("only nixl-core's own packages may use its implementation")
			.check(this.classes);
	}

	@Test
	void theIntegrationPackagesHoldOnlySpringWiring() {
		classes().that()
			.resideInAnyPackage("dev.nixl4j.autoconfigure.metrics", "dev.nixl4j.autoconfigure.resilience",
					"dev.nixl4j.autoconfigure.tracing")
			.and()
			.areTopLevelClasses()
			.and()
			.doNotHaveSimpleName("package-info")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework..", "dev.nixl4j.autoconfigure")
			.because("Spring-free meters, observations and Resilience4j parts belong in nixl-micrometer"
					+ " and nixl-resilience4j")
			.check(this.classes);
	}

}
