package dev.nixl4j.autoconfigure;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.connect.Connector;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.metadata.etcd.EtcdMetadataExchange;
import dev.nixl4j.metadata.ForwardingMetadataExchange;
import dev.nixl4j.metadata.http.HttpMetadataExchange;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Conditions of {@link NixlAutoConfiguration}: defaults, engines, exchanges, the KV
 * cache, features turned off, user beans and missing optional classes.
 */
class NixlAutoConfigurationTests {

	private static final String TOKEN = "nixl.metadata.http.token=0123456789abcdef-token";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
		.withPropertyValues("nixl.agent.engine=embedded");

	@Test
	void defaultsGiveAnAgentNamedAfterTheApplicationAConnectorAndNoExchange() {
		this.runner.withPropertyValues("spring.application.name=prefill").run(context -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(NixlAgent.class)
				.hasSingleBean(Connector.class)
				.hasSingleBean(NixlLifecycle.class)
				.doesNotHaveBean(MetadataExchange.class)
				.doesNotHaveBean(PagedKvCache.class);
			NixlAgent agent = context.getBean(NixlAgent.class);
			assertThat(agent.name()).matches("prefill-[0-9a-f]{8}");
			assertThat(agent.engine()).isEqualTo(Engine.EMBEDDED);
			assertThat(agent.backends()).hasSize(1);
			assertThat(context.getBean(Connector.class).agent()).isSameAs(agent);
		});
	}

	@Test
	void withoutAnApplicationNameTheAgentIsCalledNixlWithASuffixThatDiffersPerInstance() {
		this.runner.run(first -> this.runner.run(second -> {
			String one = first.getBean(NixlAgent.class).name();
			String two = second.getBean(NixlAgent.class).name();
			assertThat(one).matches("nixl-[0-9a-f]{8}");
			assertThat(two).matches("nixl-[0-9a-f]{8}").isNotEqualTo(one);
		}));
	}

	@Test
	void propertiesReachTheAgentConfiguration() {
		this.runner.withPropertyValues("nixl.agent.name=decode-0", "nixl.agent.thread-sync=rw",
				"nixl.agent.mailbox-capacity=128", "nixl.agent.mailbox-per-sender=16", "nixl.transfer.stall-timeout=7s",
				"nixl.agent.native-progress-delay=250us", "nixl.native.environment.UCX_TLS=tcp",
				"nixl.agent.backends[0].plugin=UCX", "nixl.agent.backends[0].parameters.num_workers=2")
			.run(context -> {
				AgentConfig config = context.getBean(AgentConfig.class);
				assertThat(config.name()).isEqualTo("decode-0");
				assertThat(config.threadSync()).isEqualTo(dev.nixl4j.ThreadSync.RW);
				assertThat(config.mailboxCapacity()).isEqualTo(128);
				assertThat(config.mailboxPerSender()).isEqualTo(16);
				assertThat(config.stallTimeout()).isEqualTo(Duration.ofSeconds(7));
				assertThat(config.nativeProgressDelay()).isEqualTo(Duration.ofNanos(250_000));
				assertThat(config.nativeEnvironment()).containsEntry("UCX_TLS", "tcp");
				assertThat(config.backends()).singleElement().satisfies(backend -> {
					assertThat(backend.plugin()).isEqualTo("UCX");
					assertThat(backend.parameters()).containsEntry("num_workers", "2");
				});
				assertThat(context.getBean(NixlAgent.class).name()).isEqualTo("decode-0");
			});
	}

	@Test
	void theNativeEngineIsUsedWhenAsked() {
		NativeNixl.require();
		this.runner.withPropertyValues("nixl.agent.engine=native").run(context -> {
			NixlAgent agent = context.getBean(NixlAgent.class);
			assertThat(agent.engine()).isEqualTo(Engine.NATIVE);
			assertThat(agent.engineDescription()).contains("nixl");
			assertThat(agent.backends()).singleElement()
				.satisfies(backend -> assertThat(backend.plugin()).isEqualTo("UCX"));
		});
	}

	@Test
	void autoPicksNativeWhenTheLibraryLoads() {
		NativeNixl.require();
		this.runner.withPropertyValues("nixl.agent.engine=auto")
			.run(context -> assertThat(context.getBean(NixlAgent.class).engine()).isEqualTo(Engine.NATIVE));
	}

	@Test
	void agentsOfTwoContextsMoveDataBetweenEachOther() {
		this.runner.run(first -> this.runner.run(second -> {
			NixlAgent a = first.getBean(NixlAgent.class);
			NixlAgent b = second.getBean(NixlAgent.class);
			try (Arena arena = Arena.ofShared()) {
				MemorySegment source = arena.allocate(64 * 1024);
				MemorySegment target = arena.allocate(64 * 1024);
				for (int i = 0; i < source.byteSize(); i++) {
					source.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
				}
				a.register(source);
				b.register(target);
				a.loadRemoteMetadata(b.localMetadata());
				try (Transfer transfer = a.transfer(XferOp.WRITE, DescriptorList.of(source), DescriptorList.of(target),
						b.name(), null)) {
					transfer.await(Duration.ofSeconds(30));
				}
				assertThat(target.mismatch(source)).isEqualTo(-1);
			}
		}));
	}

	@Test
	void customizersChangeTheAgentConfigurationInOrder() {
		this.runner.withBean("first", NixlAgentConfigCustomizer.class, () -> builder -> builder.mailboxCapacity(7))
			.withBean("second", NixlAgentConfigCustomizer.class, () -> builder -> builder.mailboxCapacity(9))
			.run(context -> assertThat(context.getBean(AgentConfig.class).mailboxCapacity()).isIn(7, 9));
	}

	@Test
	void aUserAgentReplacesTheAutoConfiguredOne() {
		this.runner
			.withBean("myAgent", NixlAgent.class,
					() -> NixlAgent.create(AgentConfig.builder("mine").engine(Engine.EMBEDDED).build()))
			.run(context -> {
				assertThat(context).hasSingleBean(NixlAgent.class);
				assertThat(context.getBean(NixlAgent.class).name()).isEqualTo("mine");
				assertThat(context.getBean(Connector.class).agent().name()).isEqualTo("mine");
			});
	}

	@Test
	void aUserAgentConfigReplacesThePropertiesOne() {
		this.runner.withBean(AgentConfig.class, () -> AgentConfig.builder("configured").engine(Engine.EMBEDDED).build())
			.run(context -> assertThat(context.getBean(NixlAgent.class).name()).isEqualTo("configured"));
	}

	@Test
	void theConnectorCanBeTurnedOffOrReplaced() {
		this.runner.withPropertyValues("nixl.connect.enabled=false")
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(Connector.class));
		this.runner.withPropertyValues("nixl.connect.lease=45s")
			.run(context -> assertThat(context.getBean(Connector.class).lease()).isEqualTo(Duration.ofSeconds(45)));
	}

	@Test
	void withoutAnAgentOnlyTheExchangeIsConfigured() {
		this.runner.withPropertyValues("nixl.agent.enabled=false", "nixl.metadata.exchange=http", TOKEN)
			.run(context -> assertThat(context).hasNotFailed()
				.hasSingleBean(InMemoryMetadataExchange.class)
				.doesNotHaveBean(AgentConfig.class)
				.doesNotHaveBean(NixlAgent.class)
				.doesNotHaveBean(Connector.class)
				.doesNotHaveBean(NixlLifecycle.class));
	}

	@Test
	void withoutAnAgentNoKvCacheIsConfigured() {
		this.runner.withPropertyValues("nixl.agent.enabled=false", "nixl.kv.layers=2")
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("kv.layers")
				.hasMessageContaining("nixl.agent.enabled is false"));
	}

	@Test
	void theHttpExchangeWithoutEndpointMakesThisApplicationTheRegistry() {
		this.runner.withPropertyValues("nixl.metadata.exchange=http", TOKEN)
			.run(context -> assertThat(context.getBean(MetadataExchange.class))
				.isInstanceOf(InMemoryMetadataExchange.class));
	}

	@Test
	void theHttpExchangeWithAnEndpointIsAClient() {
		this.runner
			.withPropertyValues("nixl.metadata.exchange=http", TOKEN,
					"nixl.metadata.http.endpoint=http://127.0.0.1:1/nixl", "nixl.metadata.publish=false")
			.run(context -> assertThat(context.getBean(MetadataExchange.class))
				.isInstanceOf(HttpMetadataExchange.class));
	}

	@Test
	void theEtcdExchangeUsesTheConnectionDetails() {
		this.runner
			.withPropertyValues("nixl.metadata.exchange=etcd", "nixl.metadata.publish=false",
					"nixl.metadata.etcd.endpoints=http://127.0.0.1:1")
			.run(context -> {
				assertThat(context.getBean(MetadataExchange.class)).isInstanceOf(EtcdMetadataExchange.class);
				assertThat(((EtcdMetadataExchange) context.getBean(MetadataExchange.class)).endpoints())
					.extracting(Object::toString)
					.containsExactly("http://127.0.0.1:1");
			});
	}

	@Test
	void aUserEtcdConnectionDetailsBeanWinsOverProperties() {
		this.runner
			.withPropertyValues("nixl.metadata.exchange=etcd", "nixl.metadata.publish=false",
					"nixl.metadata.etcd.endpoints=http://127.0.0.1:1")
			.withBean(EtcdConnectionDetails.class, () -> () -> java.util.List.of("http://127.0.0.1:2"))
			.run(context -> assertThat(((EtcdMetadataExchange) context.getBean(MetadataExchange.class)).endpoints())
				.extracting(Object::toString)
				.containsExactly("http://127.0.0.1:2"));
	}

	@Test
	void theEtcdExchangeBacksOffWithoutJetcd() {
		this.runner.withClassLoader(new FilteredClassLoader("io.etcd.jetcd"))
			.withPropertyValues("nixl.metadata.exchange=etcd", "nixl.metadata.publish=false")
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(MetadataExchange.class));
	}

	@Test
	void theNixlEtcdExchangeSetsNixlsEtcdEnvironmentForTheAgent() {
		NativeNixl.require();
		this.runner
			.withPropertyValues("nixl.agent.engine=native", "nixl.metadata.exchange=nixl-etcd",
					"nixl.metadata.publish=false", "nixl.metadata.etcd.endpoints=http://127.0.0.1:2379")
			.run(context -> {
				assertThat(context).doesNotHaveBean(MetadataExchange.class);
				assertThat(context.getBean(NixlEtcdMetadata.class))
					.isSameAs(context.getBean(NixlAgent.class).etcdMetadata().orElseThrow());
				assertThat(context.getBean(AgentConfig.class).nativeEnvironment())
					.containsEntry(NixlEtcdMetadata.ENDPOINTS_VARIABLE, "http://127.0.0.1:2379");
			});
	}

	@Test
	void aUserExchangeReplacesTheAutoConfiguredOneAndCustomizersWrapIt() {
		InMemoryMetadataExchange mine = new InMemoryMetadataExchange();
		this.runner.withPropertyValues("nixl.metadata.exchange=http", TOKEN)
			.withBean("myExchange", MetadataExchange.class, () -> mine)
			.run(context -> assertThat(context.getBean(MetadataExchange.class)).isSameAs(mine));
		this.runner.withPropertyValues("nixl.metadata.exchange=http", TOKEN)
			.withBean(MetadataExchangeCustomizer.class, () -> exchange -> new NamedExchange(exchange))
			.run(context -> assertThat(context.getBean(MetadataExchange.class)).isInstanceOf(NamedExchange.class));
	}

	@Test
	void theLifecyclePublishesTheAgentAtStartAndWithdrawsItAtStop() {
		InMemoryMetadataExchange registry = new InMemoryMetadataExchange();
		this.runner.withBean("registry", MetadataExchange.class, () -> new NamedExchange(registry)).run(context -> {
			String name = context.getBean(NixlAgent.class).name();
			assertThat(registry.isPublished(name)).isTrue();
			context.close();
			assertThat(registry.isPublished(name)).isFalse();
		});
	}

	@Test
	void aKvLayoutGivesAManagedCacheWithProducerAndConsumer() {
		this.runner
			.withPropertyValues("nixl.kv.layers=2", "nixl.kv.blocks=8", "nixl.kv.kv-heads=2", "nixl.kv.head-dim=64",
					"nixl.kv.rank=0")
			.run(context -> {
				assertThat(context).hasSingleBean(PagedKvCache.class)
					.hasSingleBean(KvProducer.class)
					.hasSingleBean(KvConsumer.class)
					.hasSingleBean(PeerLoader.class);
				PagedKvCache cache = context.getBean(PagedKvCache.class);
				KvCacheLayout layout = cache.layout();
				assertThat(layout.numLayers()).isEqualTo(2);
				assertThat(layout.numBlocks()).isEqualTo(8);
				assertThat(layout.blockLength()).isEqualTo(16L * 2 * 64 * 2);
				assertThat(context.getBean(NixlAgent.class).registrations()).hasSize(1);
				context.close();
				assertThat(cache.isOpen()).isFalse();
			});
	}

	@Test
	void withoutALayoutThereIsNoKvCache() {
		this.runner.withPropertyValues("nixl.kv.blocks=8")
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(PagedKvCache.class));
	}

	/** A user's exchange that delegates to another one. */
	static final class NamedExchange extends ForwardingMetadataExchange {

		NamedExchange(MetadataExchange delegate) {
			super(delegate);
		}

	}

}
