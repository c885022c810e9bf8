package dev.nixl4j.autoconfigure.web;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Collectors;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.connect.Connector;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvObserver;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.http.MetadataRegistryHandler;
import dev.nixl4j.autoconfigure.NixlLifecycle;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Boot application run in a child JVM by {@link RegistryOnlyApplicationTests}
 * with the properties given as arguments ({@code --name=value}). Its answers go to
 * stdout, everything it logs to stderr: {@code port <n>}, then
 * {@code beans <Type>=<count>,...} for the types a NIXL application may have, then
 * {@code closed} once it ended after {@code quit} on stdin.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class RegistryOnlyMain {

	static final List<Class<?>> TYPES = List.of(NixlAgent.class, AgentConfig.class, Connector.class,
			NixlLifecycle.class, PagedKvCache.class, KvProducer.class, KvConsumer.class, KvObserver.class,
			PeerLoader.class, MetadataExchange.class, MetadataRegistryHandler.class);

	public static void main(String[] args) throws Exception {
		PrintStream answers = System.out;
		System.setOut(System.err);
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(RegistryOnlyMain.class).run(args)) {
			answers.println("port " + context.getEnvironment().getRequiredProperty("local.server.port"));
			answers.println("beans " + TYPES.stream()
				.map((type) -> type.getSimpleName() + "=" + context.getBeanNamesForType(type).length)
				.collect(Collectors.joining(",")));
			answers.flush();
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String line;
			while ((line = in.readLine()) != null && !line.equals("quit")) {
				answers.println("unknown " + line);
			}
		}
		answers.println("closed");
		answers.flush();
	}

}
