package dev.nixl4j.metadata.etcd;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.testsupport.EtcdServerExtension;
import dev.nixl4j.testsupport.MetadataSamples;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Documents beside an agent's metadata in a real etcd: their key beside NIXL's, the lease
 * they share with the metadata, removal with the metadata and expiry with the lease. No
 * native library needed: the metadata are real NIXL blobs.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class EtcdDocumentsTest {

	private static final String KIND = "kv-cache-handle";

	@RegisterExtension
	static final EtcdServerExtension etcd = new EtcdServerExtension();

	private static Client raw;

	private final List<AutoCloseable> resources = new ArrayList<>();

	@BeforeAll
	static void startEtcd() {
		raw = Client.builder().endpoints(etcd.endpoint()).build();
	}

	@AfterAll
	static void closeRaw() {
		if (raw != null) {
			raw.close();
		}
	}

	@AfterEach
	void closeResources() throws Exception {
		for (AutoCloseable resource : this.resources.reversed()) {
			resource.close();
		}
	}

	private EtcdMetadataExchange exchange(String namespace) {
		EtcdMetadataExchange exchange = EtcdMetadataExchange.builder()
			.endpoints(etcd.endpoint())
			.namespace(namespace)
			.leaseTtl(Duration.ofSeconds(2))
			.operationTimeout(Duration.ofSeconds(3))
			.build();
		this.resources.add(exchange);
		return exchange;
	}

	private static List<KeyValue> get(String key) throws Exception {
		return raw.getKVClient().get(bytes(key)).get(10, TimeUnit.SECONDS).getKvs();
	}

	private static ByteSequence bytes(String text) {
		return ByteSequence.from(text, StandardCharsets.UTF_8);
	}

	private static String namespace() {
		return "/nixl4j-documents-" + UUID.randomUUID();
	}

	@Test
	void aDocumentLivesBesideTheMetadataUnderItsLeaseAndGoesWithIt() throws Exception {
		String namespace = namespace();
		EtcdMetadataExchange publisher = exchange(namespace);
		EtcdMetadataExchange fetcher = exchange(namespace);
		byte[] handle = ("handle-" + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);

		NixlException early = catchThrowableOfType(NixlException.class,
				() -> publisher.publishDocument(MetadataSamples.ONE_DRAM, KIND, handle));
		assertThat(early.status()).isEqualTo(NixlStatus.ERROR_INVALID_STATE);
		CompletableFuture<byte[]> awaited = CompletableFuture
			.supplyAsync(() -> fetcher.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ofSeconds(30)));
		publisher.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		publisher.publishDocument(MetadataSamples.ONE_DRAM, KIND, handle);
		assertThat(awaited.get(30, TimeUnit.SECONDS)).isEqualTo(handle);
		publisher.publishDocument(MetadataSamples.ONE_DRAM, "empty", new byte[0]);
		assertThat(fetcher.fetchDocument(MetadataSamples.ONE_DRAM, "empty", Duration.ZERO)).isEmpty();

		String documentKey = publisher.documentKey(MetadataSamples.ONE_DRAM, KIND);
		assertThat(documentKey).isEqualTo(namespace + "/" + MetadataSamples.ONE_DRAM + "/nixl4j-" + KIND);
		KeyValue document = get(documentKey).get(0);
		KeyValue metadata = get(publisher.key(MetadataSamples.ONE_DRAM)).get(0);
		assertThat(document.getValue().getBytes()).isEqualTo(handle);
		assertThat(document.getLease()).as("the metadata's lease").isEqualTo(metadata.getLease()).isNotZero();

		fetcher.invalidate(MetadataSamples.ONE_DRAM);
		assertThat(get(documentKey)).isEmpty();
		NixlException gone = catchThrowableOfType(NixlException.class,
				() -> fetcher.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ZERO));
		assertThat(gone.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(gone.getMessage()).contains("'" + KIND + "'", "'one-dram'", documentKey);
	}

	@Test
	void documentsExpireWithTheLeaseOfADeadProcessAndReturnWithANewLease() throws Exception {
		String namespace = namespace();
		EtcdMetadataExchange publisher = exchange(namespace);
		byte[] handle = ("handle-" + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
		publisher.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		publisher.publishDocument(MetadataSamples.ONE_DRAM, KIND, handle);
		String documentKey = publisher.documentKey(MetadataSamples.ONE_DRAM, KIND);

		// etcd loses the lease (as after an outage longer than its TTL): both keys go,
		// and
		// the exchange puts both back under a new lease
		long lease = get(documentKey).get(0).getLease();
		raw.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
		assertThat(get(documentKey)).isEmpty();
		Eventually.until(Duration.ofSeconds(10), "the document is back under a new lease", () -> {
			try {
				List<KeyValue> back = get(documentKey);
				return !back.isEmpty() && back.get(0).getLease() != lease;
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		assertThat(get(documentKey).get(0).getValue().getBytes()).isEqualTo(handle);

		// a publisher killed without withdrawing: its lease runs out
		List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), EtcdPublisherMain.class.getName(), etcd.endpoint(), namespace,
				"dying", "2", KIND);
		Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
		String dyingKey = publisher.documentKey("dying", KIND);
		try {
			PrintStream in = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8);
			in.println(Base64.getEncoder().encodeToString(MetadataSamples.read("no-registrations.bin")));
			in.println(Base64.getEncoder().encodeToString(handle));
			assertThat(publisher.fetchDocument("dying", KIND, Duration.ofSeconds(30))).isEqualTo(handle);
			assertThat(get(dyingKey).get(0).getLease()).isEqualTo(get(publisher.key("dying")).get(0).getLease());
		}
		finally {
			child.destroyForcibly();
			child.waitFor(10, TimeUnit.SECONDS);
		}
		Eventually.until(Duration.ofSeconds(10), "the document expires with the lease", () -> {
			try {
				return get(dyingKey).isEmpty();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		assertThat(get(publisher.key("dying"))).isEmpty();
	}

	@Test
	void oversizeDocumentsAndBadKindsAreRefused() {
		EtcdMetadataExchange exchange = exchange(namespace());
		exchange.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		NixlException tooLarge = catchThrowableOfType(NixlException.class, () -> exchange
			.publishDocument(MetadataSamples.ONE_DRAM, KIND, new byte[MetadataExchange.MAX_DOCUMENT_BYTES + 1]));
		assertThat(tooLarge.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(tooLarge.getMessage()).contains("over the limit of 65536 bytes");
		assertThat(catchThrowableOfType(NixlException.class,
				() -> exchange.publishDocument(MetadataSamples.ONE_DRAM, "metadata/x", new byte[1]))
			.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(catchThrowableOfType(NixlException.class,
				() -> exchange.fetchDocument(MetadataSamples.ONE_DRAM, "", Duration.ZERO))
			.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
	}

}
