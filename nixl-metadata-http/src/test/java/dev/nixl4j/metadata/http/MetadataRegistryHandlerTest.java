package dev.nixl4j.metadata.http;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.testsupport.MetadataSamples;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link MetadataRegistryHandler} called directly, as a transport calls it.
 */
class MetadataRegistryHandlerTest {

	private static final String TOKEN = "handler-" + UUID.randomUUID();

	private static final String ONE_DRAM_PATH = "/nixl/agents/one-dram/metadata";

	private final InMemoryMetadataExchange store = new InMemoryMetadataExchange();

	private final MetadataRegistryHandler handler = MetadataRegistryHandler.builder()
		.token(TOKEN)
		.store(this.store)
		.maxBytes(2 << 20)
		.build();

	private static InputStream empty() {
		return InputStream.nullInputStream();
	}

	@Test
	void requestsWithoutTheTokenGetA401WithoutMetadataAndTheBodyIsNotRead() throws IOException {
		this.store.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		CountingStream body = new CountingStream(Long.MAX_VALUE);
		for (String authorization : new String[] { null, "", "Bearer", "Bearer ", "Bearer not-" + TOKEN,
				"Basic " + TOKEN, TOKEN }) {
			for (String method : new String[] { "GET", "PUT", "DELETE", "POST" }) {
				MetadataRegistryHandler.Response response = this.handler.handle(method, ONE_DRAM_PATH, authorization,
						-1, body);
				assertThat(response.status()).as(method + " with " + authorization).isEqualTo(401);
				assertThat(response.headers()).containsEntry("WWW-Authenticate", "Bearer realm=\"nixl4j\"");
				assertThat(response.body()).isEmpty();
			}
		}
		assertThat(body.read).hasValue(0);
		assertThat(this.store.isPublished(MetadataSamples.ONE_DRAM)).isTrue();
	}

	@Test
	void theSchemeIsCaseInsensitiveAndTheTokenIsNot() throws IOException {
		this.store.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		assertThat(this.handler.handle("GET", ONE_DRAM_PATH, "bearer " + TOKEN, -1, empty()).status()).isEqualTo(200);
		assertThat(this.handler.handle("GET", ONE_DRAM_PATH, "Bearer " + TOKEN.toUpperCase(), -1, empty()).status())
			.isEqualTo(401);
	}

	@Test
	void aGetAnswersThePublishedBytesWithoutCaching() throws IOException {
		this.store.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		MetadataRegistryHandler.Response response = this.handler.handle("GET", ONE_DRAM_PATH, "Bearer " + TOKEN, -1,
				empty());
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.headers()).containsEntry("Content-Type", "application/octet-stream")
			.containsEntry("Cache-Control", "no-store");
		assertThat(response.body()).isEqualTo(MetadataSamples.oneDram());
		assertThat(response.toString()).doesNotContain("one-dram");
	}

	@Test
	void aDeclaredOversizeBodyIsRefusedWithoutReadingIt() throws IOException {
		CountingStream body = new CountingStream(Long.MAX_VALUE);
		MetadataRegistryHandler.Response response = this.handler.handle("PUT", ONE_DRAM_PATH, "Bearer " + TOKEN,
				(2 << 20) + 1, body);
		assertThat(response.status()).isEqualTo(413);
		assertThat(body.read).hasValue(0);
	}

	@Test
	void anUndeclaredEndlessBodyIsReadNoFurtherThanTheCap() throws IOException {
		CountingStream body = new CountingStream(Long.MAX_VALUE);
		MetadataRegistryHandler.Response response = this.handler.handle("PUT", ONE_DRAM_PATH, "Bearer " + TOKEN, -1,
				body);
		assertThat(response.status()).isEqualTo(413);
		assertThat(body.read.get()).isEqualTo((2 << 20) + 1);
		assertThat(this.store.isPublished(MetadataSamples.ONE_DRAM)).isFalse();
	}

	@Test
	void aPutStoresMetadataOfTheAgentInThePathOnly() throws IOException {
		assertThat(this.handler
			.handle("PUT", "/nixl/agents/someone-else/metadata", "Bearer " + TOKEN, -1,
					new ByteArrayInputStream(MetadataSamples.oneDram()))
			.status()).isEqualTo(400);
		assertThat(this.handler
			.handle("PUT", ONE_DRAM_PATH, "Bearer " + TOKEN, -1, new ByteArrayInputStream(MetadataSamples.oneDram()))
			.status()).isEqualTo(201);
		assertThat(this.store.fetch(MetadataSamples.ONE_DRAM, Duration.ZERO).toByteArray())
			.isEqualTo(MetadataSamples.oneDram());
		assertThat(this.store.isPublished("someone-else")).isFalse();
	}

	@Test
	void pathsOutsideTheLayoutGetA404() throws IOException {
		for (String path : new String[] { "/nixl", "/nixl/agents/", "/nixl/agents//metadata", "/nixl/agents/a",
				"/other/agents/a/metadata", "/nixl/agents/a/b/metadata", "/nixl/agents/%ZZ/metadata" }) {
			assertThat(this.handler.handle("GET", path, "Bearer " + TOKEN, -1, empty()).status()).as(path)
				.isEqualTo(404);
		}
	}

	@Test
	void aClosedStoreGivesA503() throws IOException {
		this.store.close();
		assertThat(this.handler.handle("GET", ONE_DRAM_PATH, "Bearer " + TOKEN, -1, empty()).status()).isEqualTo(503);
	}

	@Test
	void aStoreAndANonBlankTokenAreRequired() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> MetadataRegistryHandler.builder().store(this.store).token(" ").build())
			.withMessageContaining("bearer token");
		assertThatIllegalArgumentException().isThrownBy(() -> MetadataRegistryHandler.builder().token(TOKEN).build())
			.withMessageContaining("store");
	}

	/**
	 * An endless (or long) stream of zeros that counts what was read.
	 */
	private static final class CountingStream extends InputStream {

		private final long length;

		private final AtomicLong read = new AtomicLong();

		CountingStream(long length) {
			this.length = length;
		}

		@Override
		public int read() {
			if (this.read.get() >= this.length) {
				return -1;
			}
			this.read.incrementAndGet();
			return 0;
		}

		@Override
		public int read(byte[] b, int off, int len) {
			long left = this.length - this.read.get();
			if (left <= 0) {
				return -1;
			}
			int n = (int) Math.min(len, left);
			this.read.addAndGet(n);
			return n;
		}

	}

}
