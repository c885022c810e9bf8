package dev.nixl4j.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.etcd.launcher.EtcdLauncher;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

/**
 * A real etcd server for tests: Debian's {@code etcd-server} ({@code $ETCD_BINARY}, else
 * {@code etcd} on the {@code PATH}, else {@code /usr/bin/etcd}) on free loopback ports
 * with a temporary data directory, started by the {@link EtcdLauncher} that the command
 * line's {@code registry-bench} uses too. It can be stopped and started again on the same
 * ports and data, and is killed on {@link #close()}. {@link EtcdServerExtension} gives a
 * test class one.
 */
public final class EtcdServer implements AutoCloseable {

	private final EtcdLauncher launcher;

	private final @Nullable TestEtcdTls tls;

	private EtcdServer(EtcdLauncher launcher, @Nullable TestEtcdTls tls) {
		this.launcher = launcher;
		this.tls = tls;
	}

	/**
	 * Skips the calling test when etcd is not installed, or fails it in CI
	 * ({@code CI=true}).
	 * @return the etcd binary
	 */
	public static Path require() {
		Path binary = EtcdLauncher.binary();
		if (!Files.isExecutable(binary)) {
			String message = "etcd is not installed (no " + binary + "); install it with: apt-get install etcd-server "
					+ "(or point ETCD_BINARY at an etcd binary)";
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError("etcd is required in CI: " + message);
			}
			Assumptions.abort(message + ", skipping");
		}
		return binary;
	}

	/**
	 * Prepares a server on free ports without starting it.
	 * @return the server, stopped
	 */
	public static EtcdServer prepare() {
		return prepare(false, List.of());
	}

	private static EtcdServer prepare(boolean tls, List<String> alsoOn) {
		Path binary = require();
		try {
			Path data = Files.createTempDirectory("nixl4j-etcd-");
			EtcdLauncher.Builder launcher = EtcdLauncher.builder(binary)
				.name("nixl4j-test")
				.directory(data)
				.alsoListenOn(alsoOn);
			TestEtcdTls material = tls ? TestEtcdTls.create(data) : null;
			if (material != null) {
				launcher.clientCertificates(material.serverCertificate(), material.serverKey(),
						material.caCertificate());
			}
			return new EtcdServer(launcher.build(), material);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Starts a server on free ports and waits until it is healthy.
	 * @return the running server
	 */
	public static EtcdServer start() {
		return start(prepare(false, List.of()));
	}

	/**
	 * Starts a server that serves plain http clients on loopback and on more local
	 * addresses (for clients in other network namespaces), on the same port.
	 * @param addresses the IPv4 addresses to listen on besides 127.0.0.1
	 * @return the running server
	 */
	public static EtcdServer startAlsoListeningOn(String... addresses) {
		return start(prepare(false, List.of(addresses)));
	}

	/**
	 * Starts a server that serves clients over TLS only and requires a client certificate
	 * signed by its test CA ({@code --client-cert-auth}); {@link #tls()} has the client's
	 * material.
	 * @return the running server
	 */
	public static EtcdServer startWithClientCertificates() {
		return start(prepare(true, List.of()));
	}

	/**
	 * Returns the TLS material of a server started with
	 * {@link #startWithClientCertificates()}.
	 * @return the material
	 */
	public TestEtcdTls tls() {
		if (this.tls == null) {
			throw new IllegalStateException("this etcd serves plain http");
		}
		return this.tls;
	}

	private static EtcdServer start(EtcdServer server) {
		try {
			server.startAgain();
			return server;
		}
		catch (RuntimeException ex) {
			server.close();
			throw ex;
		}
	}

	/**
	 * Returns the client URL.
	 * @return {@code http://127.0.0.1:<port>}
	 */
	public String endpoint() {
		return this.launcher.endpoint();
	}

	/**
	 * Starts the server (again) on its ports and data directory, and waits until it
	 * serves clients.
	 */
	public void startAgain() {
		this.launcher.start();
	}

	/**
	 * Returns the client port, the same on every address the server listens on.
	 * @return the port
	 */
	public int clientPort() {
		return this.launcher.clientPort();
	}

	/**
	 * Turns on etcd's authentication: a {@code root} user (etcd needs one) and a user
	 * whose role may read and write every key under a prefix.
	 * @param user the user to add
	 * @param password the password of both users
	 * @param prefix the keys the user's role may read and write
	 */
	public void enableAuthentication(String user, String password, String prefix) {
		try (io.etcd.jetcd.Client client = io.etcd.jetcd.Client.builder().endpoints(endpoint()).build()) {
			io.etcd.jetcd.Auth auth = client.getAuthClient();
			io.etcd.jetcd.ByteSequence root = bytes("root");
			auth.userAdd(root, bytes(password)).get(10, TimeUnit.SECONDS);
			auth.roleAdd(root).get(10, TimeUnit.SECONDS);
			auth.userGrantRole(root, root).get(10, TimeUnit.SECONDS);
			addUser(auth, user, password, user + "-role", prefix, io.etcd.jetcd.auth.Permission.Type.READWRITE);
			auth.authEnable().get(10, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException("could not enable etcd's authentication", ex);
		}
	}

	/**
	 * Adds a user with a role of its own on the keys under a prefix (before
	 * authentication is on).
	 * @param auth the auth client
	 * @param user the user
	 * @param password its password
	 * @param role the role to create
	 * @param prefix the keys
	 * @param type what the role may do with them
	 * @throws Exception when etcd refuses
	 */
	public static void addUser(io.etcd.jetcd.Auth auth, String user, String password, String role, String prefix,
			io.etcd.jetcd.auth.Permission.Type type) throws Exception {
		byte[] end = prefix.getBytes(StandardCharsets.UTF_8);
		end[end.length - 1]++;
		auth.userAdd(bytes(user), bytes(password)).get(10, TimeUnit.SECONDS);
		auth.roleAdd(bytes(role)).get(10, TimeUnit.SECONDS);
		auth.roleGrantPermission(bytes(role), bytes(prefix), io.etcd.jetcd.ByteSequence.from(end), type)
			.get(10, TimeUnit.SECONDS);
		auth.userGrantRole(bytes(user), bytes(role)).get(10, TimeUnit.SECONDS);
	}

	private static io.etcd.jetcd.ByteSequence bytes(String text) {
		return io.etcd.jetcd.ByteSequence.from(text, StandardCharsets.UTF_8);
	}

	/**
	 * Stops the server (SIGTERM) and waits until it exited; the data directory stays.
	 */
	public void stop() {
		this.launcher.stop();
	}

	/**
	 * Deletes the data directory of a stopped server: started again, it has lost every
	 * key and lease.
	 */
	public void wipe() {
		this.launcher.wipe();
	}

	@Override
	public void close() {
		this.launcher.close();
	}

	@Override
	public String toString() {
		return this.launcher.toString();
	}

}
