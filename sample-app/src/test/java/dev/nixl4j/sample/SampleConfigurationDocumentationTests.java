package dev.nixl4j.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the {@code sample.*} table of {@code docs/configuration.md} in step with the
 * configuration processor's metadata of {@link SampleProperties}: every property has a
 * description (its field's Javadoc) and one row, every row names a property, and a row
 * shows the property's default when the metadata has one (written as in the metadata, in
 * backticks).
 */
class SampleConfigurationDocumentationTests {

	private static final Path METADATA = Path.of("target", "classes", "META-INF", "spring-configuration-metadata.json");

	private static final Path DOCUMENT = Path.of("..", "docs", "configuration.md");

	@Test
	void everySamplePropertyIsDescribedAndDocumentedWithItsDefault() throws IOException {
		Map<String, JsonNode> properties = new LinkedHashMap<>();
		for (JsonNode property : JsonMapper.builder().build().readTree(Files.readString(METADATA)).path("properties")) {
			properties.put(property.path("name").asString(), property);
		}
		assertThat(properties).as("the metadata of %s", METADATA).isNotEmpty();
		Map<String, String> rows = new LinkedHashMap<>();
		for (String line : Files.readAllLines(DOCUMENT)) {
			if (line.startsWith("| `sample.")) {
				String name = line.substring(3, line.indexOf('`', 3));
				assertThat(rows.put(name, line)).as("a second row for %s in %s", name, DOCUMENT).isNull();
			}
		}

		assertThat(properties.values())
			.as("properties without a description: add Javadoc to the field in SampleProperties")
			.filteredOn((property) -> property.path("description").asString("").isBlank())
			.isEmpty();
		assertThat(rows.keySet()).as("rows of the sample.* table in %s, against the metadata", DOCUMENT)
			.containsExactlyInAnyOrderElementsOf(properties.keySet());
		properties.forEach((name, property) -> {
			JsonNode fallback = property.path("defaultValue");
			if (!fallback.isMissingNode() && !fallback.isNull()) {
				List<String> cells = List.of(rows.get(name).split("\\|"));
				assertThat(cells.get(3)).as("the default column of %s in %s", name, DOCUMENT)
					.contains("`" + fallback.asString() + "`");
			}
		});
	}

}
