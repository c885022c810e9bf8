package dev.nixl4j.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.RecordComponent;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.EmbeddedOptions;
import dev.nixl4j.metadata.etcd.EtcdMetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.lifecycle.AgentLifecycle;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.core.convert.TypeDescriptor;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The defaults of the {@code nixl.*} properties are the core's: an application that sets
 * none gets the agent a plain Java program gets from {@link AgentConfig#builder(String)},
 * and the defaults the configuration metadata shows (for IDEs and
 * {@code docs/configuration.md}) are the values a freshly bound {@link NixlProperties}
 * holds.
 */
class NixlPropertiesDefaultsTests {

	private static final String METADATA = "META-INF/spring-configuration-metadata.json";

	@Test
	void unsetPropertiesGiveTheCoresDefaultAgent() {
		AgentConfig bound = AgentConfigs.builder(freshlyBound(), new StandardEnvironment(), null).build();
		AgentConfig core = AgentConfig.builder(bound.name()).build();
		List<String> differences = new ArrayList<>();
		compareComponents("AgentConfig", bound, core, differences);
		compareComponents("EmbeddedOptions", bound.embedded(), core.embedded(), differences);
		assertThat(differences)
			.withFailMessage(() -> "A nixl.* default differs from the core's; make the field initialiser in"
					+ " NixlProperties use the core's constant:\n  " + String.join("\n  ", differences))
			.isEmpty();
		assertThat(bound).isEqualTo(core);
	}

	@Test
	void etcdDefaultsAreTheEtcdExchangesDefaults() {
		NixlProperties.Etcd etcd = freshlyBound().getMetadata().getEtcd();
		assertThat(etcd.getEndpoints()).containsExactly(EtcdMetadataExchange.DEFAULT_ENDPOINT);
		assertThat(etcd.getNamespace()).isEqualTo(EtcdMetadataExchange.DEFAULT_NAMESPACE);
		assertThat(etcd.getLeaseTtl()).isEqualTo(EtcdMetadataExchange.DEFAULT_LEASE_TTL);
		assertThat(etcd.getOperationTimeout()).isEqualTo(EtcdMetadataExchange.DEFAULT_OPERATION_TIMEOUT);
	}

	@Test
	void kvLeaseTtlIsTheProducersDefault() {
		assertThat(freshlyBound().getKv().getLeaseTtl()).isEqualTo(KvProducer.DEFAULT_LEASE_TTL);
	}

	@Test
	void lifecycleDefaultsAreTheCoreLifecycles() {
		NixlProperties properties = freshlyBound();
		assertThat(properties.getShutdown().getTimeout()).isEqualTo(AgentLifecycle.DEFAULT_SHUTDOWN_TIMEOUT);
		assertThat(properties.getMetadata().getCheckInterval()).isEqualTo(MetadataPublication.DEFAULT_CHECK_INTERVAL);
		assertThat(properties.getMetadata().isPublish()).as("publishing at start").isTrue();
	}

	@Test
	void everyDefaultInTheMetadataIsTheBoundDefault() throws IOException {
		BeanWrapper bound = new BeanWrapperImpl(freshlyBound());
		List<String> problems = new ArrayList<>();
		int compared = 0;
		for (JsonNode property : readMetadata().path("properties").values()) {
			String name = property.path("name").asString("");
			JsonNode defaultValue = property.get("defaultValue");
			if (!name.startsWith("nixl.") || defaultValue == null || defaultValue.isNull()) {
				continue;
			}
			String path = camelCase(name.substring("nixl.".length()));
			if (!bound.isReadableProperty(path)) {
				problems.add(name + ": NixlProperties has no property " + path);
				continue;
			}
			Object actual = bound.getPropertyValue(path);
			Object documented = convert(defaultValue, bound.getPropertyTypeDescriptor(path));
			if (!Objects.equals(actual, documented)) {
				problems.add(name + ": the metadata says " + defaultValue + ", a freshly bound NixlProperties holds "
						+ actual);
			}
			compared++;
		}
		assertThat(problems)
			.withFailMessage(() -> "Fix additional-spring-configuration-metadata.json (and docs/configuration.md):\n  "
					+ String.join("\n  ", problems))
			.isEmpty();
		assertThat(compared).as("defaults compared").isGreaterThan(30);
	}

	private static NixlProperties freshlyBound() {
		return new Binder(new MapConfigurationPropertySource(Map.of())).bindOrCreate("nixl", NixlProperties.class);
	}

	private static void compareComponents(String type, Record bound, Record core, List<String> differences) {
		for (RecordComponent component : bound.getClass().getRecordComponents()) {
			Object boundValue = read(component, bound);
			Object coreValue = read(component, core);
			if (!Objects.equals(boundValue, coreValue)) {
				differences.add(type + "." + component.getName() + ": properties give " + boundValue + ", the core "
						+ coreValue);
			}
		}
	}

	private static @Nullable Object read(RecordComponent component, Record record) {
		try {
			return component.getAccessor().invoke(record);
		}
		catch (ReflectiveOperationException ex) {
			return fail("Could not read %s of %s: %s", component.getName(), record, ex);
		}
	}

	private static @Nullable Object convert(JsonNode value, @Nullable TypeDescriptor type) {
		Object raw = value.isArray() ? value.values().stream().map(JsonNode::asString).toList() : value.asString();
		TypeDescriptor source = value.isArray()
				? TypeDescriptor.collection(List.class, TypeDescriptor.valueOf(String.class))
				: TypeDescriptor.valueOf(String.class);
		return ApplicationConversionService.getSharedInstance().convert(raw, source, type);
	}

	private static String camelCase(String dashed) {
		StringBuilder camel = new StringBuilder();
		boolean upper = false;
		for (char c : dashed.toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				camel.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return camel.toString();
	}

	private static JsonNode readMetadata() throws IOException {
		for (URL candidate : Collections
			.list(NixlPropertiesDefaultsTests.class.getClassLoader().getResources(METADATA))) {
			try (InputStream in = candidate.openStream()) {
				JsonNode root = JsonMapper.shared().readTree(in);
				for (JsonNode group : root.path("groups").values()) {
					if (NixlProperties.class.getName().equals(group.path("type").asString(""))) {
						return root;
					}
				}
			}
		}
		return fail("No %s on the class path describes NixlProperties", METADATA);
	}

}
