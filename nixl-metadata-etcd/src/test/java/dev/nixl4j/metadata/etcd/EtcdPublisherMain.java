package dev.nixl4j.metadata.etcd;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import dev.nixl4j.AgentMetadata;

/**
 * A process that publishes one agent's metadata through an {@link EtcdMetadataExchange}
 * and then waits, so that a test can kill it with SIGKILL and watch the lease run out.
 * Arguments: endpoint, namespace, agent name, lease TTL in seconds, and optionally a
 * document kind; the metadata comes base64-encoded on stdin's first line, the document
 * (when a kind is given) on its second. Prints {@code PUBLISHED} once the key is stored.
 */
public final class EtcdPublisherMain {

	private EtcdPublisherMain() {
	}

	/**
	 * Runs the publisher.
	 * @param args endpoint, namespace, agent name, TTL seconds[, document kind]
	 * @throws Exception on failure
	 */
	public static void main(String[] args) throws Exception {
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		AgentMetadata metadata = AgentMetadata.of(Base64.getDecoder().decode(in.readLine()));
		EtcdMetadataExchange exchange = EtcdMetadataExchange.builder()
			.endpoints(args[0])
			.namespace(args[1])
			.leaseTtl(Duration.ofSeconds(Long.parseLong(args[3])))
			.build();
		exchange.publish(args[2], metadata);
		if (args.length > 4) {
			exchange.publishDocument(args[2], args[4], Base64.getDecoder().decode(in.readLine()));
		}
		System.out.println("PUBLISHED");
		System.out.flush();
		while (in.readLine() != null) {
			// wait for the test to end this process
		}
		exchange.close();
	}

}
