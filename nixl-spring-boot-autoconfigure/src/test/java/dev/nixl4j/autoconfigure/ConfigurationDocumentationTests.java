package dev.nixl4j.autoconfigure;

import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.BeanUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Keeps {@code docs/configuration.md} in step with the configuration metadata that Spring
 * Boot's configuration processor generates from {@link NixlProperties} (its field Javadoc
 * becomes the descriptions, its field initialisers the defaults, merged with
 * {@code additional-spring-configuration-metadata.json}).
 *
 * <p>
 * A property is documented by a row of a Markdown table whose first cell begins with its
 * name in backticks, in a table with a {@code default} column, under the nearest heading
 * that names the property's group as {@code `<group>.*`} (for example
 * {@code `nixl.metadata.http.*`}). The name in the row depends on the property's type in
 * the metadata:
 * <ul>
 * <li>a value or a list of values: the name, for example
 * {@code `nixl.transfer.timeout`};</li>
 * <li>a map ({@code java.util.Map<...>}): the name followed by {@code .*}, for example
 * {@code `nixl.native.environment.*`}, because each key is set as a property of its
 * own;</li>
 * <li>a list of objects ({@code java.util.List<T>} with {@code T} a class of nixl4j, such
 * as {@code nixl.agent.backends}): the name itself, and {@code <name>[n].<property>} for
 * every bean property of {@code T}, following the map rule
 * ({@code `nixl.agent.backends[n].plugin`},
 * {@code `nixl.agent.backends[n].parameters.*`}). The metadata does not list these
 * element properties; they are read from {@code T} by reflection.</li>
 * </ul>
 *
 * <p>
 * Defaults are compared loosely: when the metadata gives a property a default (for an
 * element property: the value a new {@code T} holds, if it is a string, number, boolean
 * or enum), the row's default cell must contain that value in backticks, ignoring case
 * and treating {@code _} as {@code -}; for a list default, each element in backticks. So
 * the metadata's {@code "30s"} matches {@code `30s`}, {@code 4096} matches {@code `4096`}
 * and {@code "strict"} matches {@code `STRICT`}; other spellings of the same value (such
 * as {@code `30000ms`}) do not. The cell may say more around it. Properties without a
 * default in the metadata may describe theirs in words.
 */
class ConfigurationDocumentationTests {

	private static final String DOCUMENT = "docs/configuration.md";

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	private static final String PREFIX = "nixl.";

	private static final Pattern SEPARATOR_ROW = Pattern.compile("\\|?(\\s*:?-+:?\\s*\\|)+\\s*:?-*:?\\s*");

	private static JsonNode metadata;

	private static Map<String, Documented> expected;

	private static List<Row> rows;

	@BeforeAll
	static void load() throws IOException {
		metadata = readMetadata();
		expected = expectedRows(metadata);
		rows = readRows(documentPath());
	}

	@Test
	void everyPropertyHasADescription() {
		List<String> problems = new ArrayList<>();
		for (JsonNode property : nixlProperties(metadata)) {
			JsonNode description = property.get("description");
			if (description == null || description.asString().isBlank()) {
				problems.add(property.get("name").asString() + " (field of "
						+ property.path("sourceType").asString("an unknown class") + ")");
			}
		}
		assertThat(problems).withFailMessage(() -> "These properties have no description in " + METADATA
				+ ". Add Javadoc to their fields in NixlProperties.java (or their own @ConfigurationProperties class);"
				+ " the configuration processor turns it into the description:\n  " + String.join("\n  ", problems))
			.isEmpty();
	}

	@Test
	void everyPropertyHasARowInTheSectionOfItsGroup() {
		List<String> problems = new ArrayList<>();
		for (Documented property : expected.values()) {
			List<Row> documented = rowsNaming(property.name());
			if (documented.isEmpty()) {
				problems.add("add a row \"| `" + property.name() + "` | type | default | meaning |\" under the heading"
						+ " that names `" + property.group() + ".*`");
			}
			else if (documented.size() > 1) {
				problems.add("`" + property.name() + "` has " + documented.size() + " rows (lines "
						+ documented.stream().map(Row::line).toList() + "): keep one");
			}
			else if (!documented.getFirst().heading().contains("`" + property.group() + ".*`")) {
				Row row = documented.getFirst();
				problems.add("move the row of `" + property.name() + "` (line " + row.line()
						+ ") under the heading that names `" + property.group() + ".*`; it is under \"" + row.heading()
						+ "\"");
			}
		}
		assertThat(problems)
			.withFailMessage(() -> "Fix " + DOCUMENT + ", which must document every property of " + METADATA + ":\n  "
					+ String.join("\n  ", problems))
			.isEmpty();
	}

	@Test
	void everyRowNamesAProperty() {
		List<String> problems = new ArrayList<>();
		for (Row row : rows) {
			if (!expected.containsKey(row.name())) {
				problems.add("line " + row.line() + ": `" + row.name() + "` is not a property of the starter:"
						+ " fix the name (maps end in .*, list elements read [n]) or remove the row");
			}
		}
		assertThat(problems)
			.withFailMessage(() -> "Fix " + DOCUMENT + ", whose rows must name properties of " + METADATA + ":\n  "
					+ String.join("\n  ", problems))
			.isEmpty();
	}

	@Test
	void everyRowShowsTheDefault() {
		List<String> problems = new ArrayList<>();
		for (Documented property : expected.values()) {
			List<Row> documented = rowsNaming(property.name());
			if (property.defaults().isEmpty() || documented.isEmpty()) {
				continue;
			}
			Row row = documented.getFirst();
			if (row.defaultCell() == null) {
				problems.add("line " + row.line() + ": the table of `" + property.name() + "` has no default column;"
						+ " use the columns | property | type | default | meaning |");
				continue;
			}
			String cell = loosely(row.defaultCell());
			for (String value : property.defaults()) {
				if (!cell.contains("`" + loosely(value) + "`")) {
					problems.add("line " + row.line() + ": the default column of `" + property.name() + "` must show `"
							+ value + "` (the default in " + property.source() + "); it shows \"" + row.defaultCell()
							+ "\"");
				}
			}
		}
		assertThat(problems)
			.withFailMessage(() -> "Fix the defaults in " + DOCUMENT + " (or, if the code's default is wrong, the field"
					+ " initialiser in NixlProperties.java):\n  " + String.join("\n  ", problems))
			.isEmpty();
	}

	private static List<Row> rowsNaming(String name) {
		return rows.stream().filter(row -> row.name().equals(name)).toList();
	}

	private static JsonNode readMetadata() throws IOException {
		List<URL> candidates = Collections
			.list(ConfigurationDocumentationTests.class.getClassLoader().getResources(METADATA));
		for (URL candidate : candidates) {
			JsonNode root;
			try (InputStream in = candidate.openStream()) {
				root = JsonMapper.shared().readTree(in);
			}
			for (JsonNode group : root.path("groups").values()) {
				if (NixlProperties.class.getName().equals(group.path("type").asString(""))) {
					return root;
				}
			}
		}
		return fail("None of the %d %s on the class path describes NixlProperties: the configuration processor"
				+ " did not run. Compile nixl-spring-boot-autoconfigure with spring-boot-configuration-processor on"
				+ " the annotation processor path.", candidates.size(), METADATA);
	}

	private static List<JsonNode> nixlProperties(JsonNode root) {
		return root.path("properties")
			.values()
			.stream()
			.filter(property -> property.path("name").asString("").startsWith(PREFIX))
			.toList();
	}

	private static Map<String, Documented> expectedRows(JsonNode root) {
		List<String> groups = root.path("groups")
			.values()
			.stream()
			.map(group -> group.path("name").asString(""))
			.filter(name -> name.startsWith(PREFIX))
			.toList();
		Map<String, Documented> rows = new LinkedHashMap<>();
		for (JsonNode property : nixlProperties(root)) {
			String name = property.get("name").asString();
			String type = property.path("type").asString("");
			String group = groupOf(name, groups);
			List<String> defaults = defaults(property.get("defaultValue"));
			if (type.startsWith("java.util.Map<")) {
				add(rows, new Documented(name + ".*", group, defaults, METADATA));
				continue;
			}
			add(rows, new Documented(name, group, defaults, METADATA));
			Class<?> element = objectElementType(type);
			if (element != null) {
				Object fresh = BeanUtils.instantiateClass(element);
				for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(element)) {
					if (descriptor.getReadMethod() == null || descriptor.getWriteMethod() == null) {
						continue;
					}
					String elementName = name + "[n]." + dashed(descriptor.getName());
					String source = "a new " + element.getSimpleName();
					if (Map.class.isAssignableFrom(descriptor.getPropertyType())) {
						add(rows, new Documented(elementName + ".*", group, List.of(), source));
					}
					else {
						Object value = invoke(descriptor, fresh);
						add(rows, new Documented(elementName, group, simpleDefault(value), source));
					}
				}
			}
		}
		return rows;
	}

	private static void add(Map<String, Documented> rows, Documented documented) {
		rows.put(documented.name(), documented);
	}

	private static String groupOf(String name, List<String> groups) {
		String best = "nixl";
		for (String group : groups) {
			if (name.startsWith(group + ".") && group.length() > best.length()) {
				best = group;
			}
		}
		return best;
	}

	private static List<String> defaults(@Nullable JsonNode value) {
		if (value == null || value.isNull()) {
			return List.of();
		}
		if (value.isArray()) {
			return value.values().stream().map(JsonNode::asString).toList();
		}
		return List.of(value.asString());
	}

	/**
	 * Returns the element type of a list of nixl4j objects.
	 * @param type the type as the metadata writes it
	 * @return the element class, or {@code null} when the type is not such a list
	 */
	private static @Nullable Class<?> objectElementType(String type) {
		if (!type.startsWith("java.util.List<") || !type.endsWith(">")) {
			return null;
		}
		String element = type.substring("java.util.List<".length(), type.length() - 1);
		if (!element.startsWith("dev.nixl4j.")) {
			return null;
		}
		try {
			Class<?> found = Class.forName(element);
			return found.isEnum() ? null : found;
		}
		catch (ClassNotFoundException ex) {
			return fail("The metadata names element type %s, which is not on the class path", element);
		}
	}

	private static @Nullable Object invoke(PropertyDescriptor descriptor, Object target) {
		try {
			return descriptor.getReadMethod().invoke(target);
		}
		catch (ReflectiveOperationException ex) {
			return fail("Could not read %s of a new %s: %s", descriptor.getName(), target.getClass().getSimpleName(),
					ex);
		}
	}

	private static List<String> simpleDefault(@Nullable Object value) {
		if (value instanceof Enum<?> constant) {
			return List.of(constant.name().toLowerCase(Locale.ROOT).replace('_', '-'));
		}
		if (value instanceof CharSequence || value instanceof Number || value instanceof Boolean) {
			return List.of(value.toString());
		}
		return List.of();
	}

	private static String dashed(String camelCase) {
		StringBuilder dashed = new StringBuilder();
		for (char c : camelCase.toCharArray()) {
			if (Character.isUpperCase(c)) {
				dashed.append('-').append(Character.toLowerCase(c));
			}
			else {
				dashed.append(c);
			}
		}
		return dashed.toString();
	}

	private static String loosely(String text) {
		return text.toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/**
	 * Finds the document: Maven runs tests in the module's directory, an IDE may run them
	 * in the repository's.
	 * @return the path of the document
	 */
	private static Path documentPath() {
		for (Path candidate : List.of(Path.of("..", DOCUMENT), Path.of(DOCUMENT))) {
			if (Files.isRegularFile(candidate)) {
				return candidate;
			}
		}
		return fail("%s not found from %s (looked for ../%s and %s)", DOCUMENT, Path.of("").toAbsolutePath(), DOCUMENT,
				DOCUMENT);
	}

	/**
	 * Reads the table rows that document a {@code nixl.} property.
	 * @param document the Markdown file
	 * @return the rows, in order
	 * @throws IOException if the file cannot be read
	 */
	private static List<Row> readRows(Path document) throws IOException {
		List<String> lines = Files.readAllLines(document);
		List<Row> rows = new ArrayList<>();
		String heading = "";
		List<String> header = List.of();
		for (int i = 0; i < lines.size(); i++) {
			String line = lines.get(i).strip();
			if (line.startsWith("#")) {
				heading = line;
				header = List.of();
				continue;
			}
			if (!line.startsWith("|")) {
				header = List.of();
				continue;
			}
			if (SEPARATOR_ROW.matcher(line).matches()) {
				continue;
			}
			List<String> cells = cells(line);
			if (header.isEmpty()) {
				header = cells;
				continue;
			}
			String first = cells.isEmpty() ? "" : cells.getFirst();
			if (!first.startsWith("`") || first.indexOf('`', 1) < 0) {
				continue;
			}
			String name = first.substring(1, first.indexOf('`', 1));
			if (name.startsWith(PREFIX)) {
				int column = header.stream().map(cell -> cell.toLowerCase(Locale.ROOT)).toList().indexOf("default");
				String defaultCell = (column >= 0 && column < cells.size()) ? cells.get(column) : null;
				rows.add(new Row(name, defaultCell, heading, i + 1));
			}
		}
		return rows;
	}

	private static List<String> cells(String line) {
		List<String> cells = new ArrayList<>();
		StringBuilder cell = new StringBuilder();
		for (int i = line.startsWith("|") ? 1 : 0; i < line.length(); i++) {
			char c = line.charAt(i);
			if (c == '\\' && i + 1 < line.length() && line.charAt(i + 1) == '|') {
				cell.append('|');
				i++;
			}
			else if (c == '|') {
				cells.add(cell.toString().strip());
				cell.setLength(0);
			}
			else {
				cell.append(c);
			}
		}
		if (!cell.toString().isBlank()) {
			cells.add(cell.toString().strip());
		}
		return cells;
	}

	/**
	 * A name the document must have a row for.
	 *
	 * @param name the name as the row writes it
	 * @param group the group whose section holds the row
	 * @param defaults the default the row must show, one entry per list element; empty
	 * for none
	 * @param source where the default comes from
	 */
	private record Documented(String name, String group, List<String> defaults, String source) {
	}

	/**
	 * A table row of the document that names a {@code nixl.} property.
	 *
	 * @param name the name in its first cell
	 * @param defaultCell its cell in the table's default column, or {@code null} when
	 * there is none
	 * @param heading the nearest heading above it
	 * @param line its line number
	 */
	private record Row(String name, @Nullable String defaultCell, String heading, int line) {
	}

}
