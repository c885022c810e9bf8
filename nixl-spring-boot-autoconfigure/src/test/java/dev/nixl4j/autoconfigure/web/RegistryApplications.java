package dev.nixl4j.autoconfigure.web;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.MetadataExchange;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Full Spring Boot applications for the registry tests: an agent (embedded engine unless
 * the properties name another) with two registered 1 MiB buffers (a source filled with a
 * pattern, and a sink), on a random port of the loopback address, and what the tests do
 * with them.
 */
final class RegistryApplications {

	static final Duration WAIT = Duration.ofSeconds(30);

	static final int BUFFER_BYTES = 1 << 20;

	private RegistryApplications() {
	}

	/**
	 * Starts an application.
	 * @param properties its properties beside the common ones (they win over those)
	 * @param sources more configuration classes
	 * @return the running application
	 */
	static ConfigurableApplicationContext start(List<String> properties, Class<?>... sources) {
		List<String> all = new ArrayList<>(
				List.of("server.port=0", "server.address=127.0.0.1", "nixl.agent.engine=embedded",
						// transfers between the two applications go over the embedded
						// engine's TCP path
						"nixl.embedded.in-process-copies=false", "nixl.metadata.exchange=http",
						"spring.main.banner-mode=off", "logging.level.root=WARN"));
		all.addAll(properties);
		List<Class<?>> classes = new ArrayList<>(List.of(TransferApplication.class));
		classes.addAll(List.of(sources));
		return new SpringApplicationBuilder(classes.toArray(Class<?>[]::new)).properties(all.toArray(String[]::new))
			.run();
	}

	static int port(ConfigurableApplicationContext context) {
		return context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
	}

	static NixlAgent agent(ConfigurableApplicationContext context) {
		return context.getBean(NixlAgent.class);
	}

	static MetadataExchange exchange(ConfigurableApplicationContext context) {
		return context.getBean(MetadataExchange.class);
	}

	static Buffers buffers(ConfigurableApplicationContext context) {
		return context.getBean(Buffers.class);
	}

	/**
	 * Each application loads the other's metadata through its exchange bean, and each
	 * moves bytes both ways: a WRITE of its source into the peer's sink and a READ of the
	 * peer's source into its own sink, every result checked byte for byte.
	 */
	static void loadAndTransferBothWays(ConfigurableApplicationContext a, ConfigurableApplicationContext b) {
		NixlAgent agentA = agent(a);
		NixlAgent agentB = agent(b);
		Buffers buffersA = buffers(a);
		Buffers buffersB = buffers(b);
		assertThat(Bytes.same(buffersA.source(), buffersB.source())).as("distinct patterns").isFalse();

		exchange(b).load(agentB, agentA.name(), WAIT);
		exchange(a).load(agentA, agentB.name(), WAIT);
		assertThat(agentB.remoteAgents()).contains(agentA.name());
		assertThat(agentA.remoteAgents()).contains(agentB.name());

		transfer(agentB, XferOp.WRITE, buffersB.source(), buffersA.sink(), agentA.name());
		assertThat(Bytes.same(buffersA.sink(), buffersB.source())).as("B wrote its source into A's sink").isTrue();
		transfer(agentB, XferOp.READ, buffersB.sink(), buffersA.source(), agentA.name());
		assertThat(Bytes.same(buffersB.sink(), buffersA.source())).as("B read A's source into its sink").isTrue();

		buffersA.sink().fill((byte) 0);
		buffersB.sink().fill((byte) 0);
		transfer(agentA, XferOp.WRITE, buffersA.source(), buffersB.sink(), agentB.name());
		assertThat(Bytes.same(buffersB.sink(), buffersA.source())).as("A wrote its source into B's sink").isTrue();
		transfer(agentA, XferOp.READ, buffersA.sink(), buffersB.source(), agentB.name());
		assertThat(Bytes.same(buffersA.sink(), buffersB.source())).as("A read B's source into its sink").isTrue();
	}

	private static void transfer(NixlAgent initiator, XferOp op, MemorySegment local, MemorySegment remote,
			String remoteAgent) {
		try (Transfer transfer = initiator.transfer(op, DescriptorList.of(local), DescriptorList.of(remote),
				remoteAgent, null)) {
			transfer.await(WAIT);
			assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
		}
	}

	/**
	 * Sends a request to a registry.
	 * @param client the client
	 * @param method the method
	 * @param uri the URI
	 * @param authorization the {@code Authorization} header, or {@code null} for none
	 * @param body the body of a PUT, or {@code null}
	 * @return the response
	 */
	static HttpResponse<byte[]> send(HttpClient client, String method, URI uri, @Nullable String authorization,
			byte @Nullable [] body) throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri)
			.timeout(Duration.ofSeconds(10))
			.method(method, (body != null) ? HttpRequest.BodyPublishers.ofByteArray(body)
					: HttpRequest.BodyPublishers.noBody());
		if (authorization != null) {
			request.header("Authorization", authorization);
		}
		return client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
	}

	/**
	 * The test application.
	 */
	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class TransferApplication {

		@Bean(destroyMethod = "close")
		Buffers buffers(NixlAgent agent) {
			return new Buffers(agent);
		}

		@Bean
		ServingThreads servingThreads() {
			return new ServingThreads();
		}

		@Bean
		FilterRegistrationBean<ServingThreads> servingThreadsFilter(ServingThreads threads) {
			FilterRegistrationBean<ServingThreads> registration = new FilterRegistrationBean<>(threads);
			registration.addUrlPatterns("/nixl/*");
			return registration;
		}

	}

	/**
	 * Two buffers registered with the agent before its metadata is published: a source
	 * holding a pattern of the agent's own, and a zeroed sink.
	 */
	static final class Buffers implements AutoCloseable {

		private final Arena arena = Arena.ofShared();

		private final MemorySegment source;

		private final MemorySegment sink;

		private final Registration registration;

		Buffers(NixlAgent agent) {
			this.source = Bytes.pattern(this.arena, BUFFER_BYTES, agent.name().hashCode());
			this.sink = this.arena.allocate(BUFFER_BYTES, 64);
			this.registration = agent.register(this.source, this.sink);
		}

		MemorySegment source() {
			return this.source;
		}

		MemorySegment sink() {
			return this.sink;
		}

		@Override
		public void close() {
			this.registration.close();
			this.arena.close();
		}

	}

	/**
	 * Records whether the registry's requests ran on virtual threads.
	 */
	static final class ServingThreads implements Filter {

		private final Set<Boolean> virtual = ConcurrentHashMap.newKeySet();

		@Override
		public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
				throws IOException, ServletException {
			this.virtual.add(Thread.currentThread().isVirtual());
			chain.doFilter(request, response);
		}

		/**
		 * Returns what was seen: {@code true} for requests served on a virtual thread,
		 * {@code false} for platform threads.
		 * @return the kinds of thread seen
		 */
		Set<Boolean> virtual() {
			return Set.copyOf(this.virtual);
		}

	}

}
