package dev.nixl4j.metadata.etcd;

import java.util.ArrayList;
import java.util.List;

import dev.nixl4j.testsupport.NativeNixl;
import io.etcd.jetcd.Client;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import dev.nixl4j.testsupport.EtcdServerExtension;

/**
 * What the tests with native agents and a real etcd share: one etcd server for the class,
 * a raw jetcd client to look at and tamper with its keys, and resources closed after each
 * test in reverse order.
 */
abstract class EtcdAgentTests {

	/** The etcd server of the test class. */
	@RegisterExtension
	static final EtcdServerExtension etcd = new EtcdServerExtension();

	/** A plain client of that server, beside the exchanges under test. */
	static Client raw;

	private final List<AutoCloseable> resources = new ArrayList<>();

	@BeforeAll
	static void startEtcd() {
		NativeNixl.require();
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
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
	}

	/** Closes a resource after the test, before those created earlier. */
	<T extends AutoCloseable> T track(T resource) {
		this.resources.add(resource);
		return resource;
	}

}
