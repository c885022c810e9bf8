package dev.nixl4j.sample;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's packages depend on each other one way only: each package is a slice, and
 * no two slices depend on each other through any chain.
 */
class SamplePackageCycleTests {

	@Test
	void packagesAreFreeOfCycles() {
		JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("dev.nixl4j.sample");
		assertThat(classes).as("the sample's classes").isNotEmpty();
		slices().matching("dev.nixl4j.(**)")
			.should()
			.beFreeOfCycles()
			.because("a package cycle ties the workers to the load generator")
			.check(classes);
	}

}
