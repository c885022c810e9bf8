package dev.nixl4j.testsupport;

import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real etcd server for a test class: registered on a {@code static} field with
 * {@link org.junit.jupiter.api.extension.RegisterExtension @RegisterExtension}, one
 * server serves every test of the class and is killed after the last; on an instance
 * field, each test gets its own. The server starts when a test (or a {@code @BeforeAll}
 * method) first asks for it, so a class whose tests are skipped before (for example by
 * {@link NativeNixl#require()}) starts none. Without etcd the test is skipped, and fails
 * in CI ({@code CI=true}), as {@link EtcdServer#require()} says.
 *
 * <pre class="code">
 * &#64;RegisterExtension
 * static final EtcdServerExtension etcd = new EtcdServerExtension();
 *
 * &#64;Test
 * void publishes() {
 *     ... EtcdMetadataExchange.builder().endpoints(etcd.endpoint()) ...
 * }
 * </pre>
 */
public final class EtcdServerExtension implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {

	private final Supplier<EtcdServer> factory;

	private @Nullable EtcdServer server;

	private boolean perClass;

	/**
	 * A plain {@code http} server, started when first asked for.
	 */
	public EtcdServerExtension() {
		this(EtcdServer::start);
	}

	private EtcdServerExtension(Supplier<EtcdServer> factory) {
		this.factory = factory;
	}

	/**
	 * A server that serves clients over TLS only and requires a client certificate
	 * ({@link EtcdServer#startWithClientCertificates()}), started when first asked for.
	 * @return the extension
	 */
	public static EtcdServerExtension withClientCertificates() {
		return new EtcdServerExtension(EtcdServer::startWithClientCertificates);
	}

	/**
	 * A server on its ports that is not started: the test starts it
	 * ({@link EtcdServer#startAgain()}), after it checked what happens while etcd is not
	 * there.
	 * @return the extension
	 */
	public static EtcdServerExtension notStarted() {
		return new EtcdServerExtension(EtcdServer::prepare);
	}

	/**
	 * Returns the server, starting it at the first call.
	 * @return the server
	 */
	public synchronized EtcdServer server() {
		if (this.server == null) {
			this.server = this.factory.get();
		}
		return this.server;
	}

	/**
	 * Returns the server's client URL, starting it at the first call.
	 * @return {@code http://127.0.0.1:<port>} (or {@code https://...})
	 */
	public String endpoint() {
		return server().endpoint();
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		// only an extension on a static field is told that a class starts
		this.perClass = true;
	}

	@Override
	public void afterEach(ExtensionContext context) {
		if (!this.perClass) {
			close();
		}
	}

	@Override
	public void afterAll(ExtensionContext context) {
		close();
	}

	private synchronized void close() {
		if (this.server != null) {
			this.server.close();
			this.server = null;
		}
	}

}
