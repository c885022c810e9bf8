package dev.nixl4j.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

import org.jspecify.annotations.Nullable;

/**
 * A throw-away CA with a server certificate for 127.0.0.1 and a client certificate, made
 * with the JDK's {@code keytool} for a TLS etcd in tests: PEM files for etcd, key and
 * trust managers for the client.
 */
public final class TestEtcdTls {

	private static final char[] PASSWORD = "changeit".toCharArray();

	private final Path directory;

	private TestEtcdTls(Path directory) {
		this.directory = directory;
	}

	/**
	 * Makes the CA and both certificates in a directory.
	 * @param directory where the files go
	 * @return the material
	 */
	static TestEtcdTls create(Path directory) {
		TestEtcdTls tls = new TestEtcdTls(directory);
		try {
			tls.keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
					"CN=nixl4j-test-ca", "-ext", "bc:c", "-validity", "2", "-keystore", "ca.p12");
			tls.keytool("-exportcert", "-alias", "ca", "-rfc", "-keystore", "ca.p12", "-file", "ca.crt");
			tls.signed("server", "CN=127.0.0.1", "san=ip:127.0.0.1,dns:localhost", "eku=serverAuth,clientAuth");
			tls.signed("client", "CN=nixl4j-client", null, "eku=clientAuth");
			tls.writeKey("server");
			tls.writeKey("client");
			return tls;
		}
		catch (Exception ex) {
			throw new IllegalStateException("could not make the test TLS material", ex);
		}
	}

	private void writeKey(String alias) throws Exception {
		PrivateKey key = privateKey(alias);
		String pem = "-----BEGIN PRIVATE KEY-----\n"
				+ Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(key.getEncoded())
				+ "\n-----END PRIVATE KEY-----\n";
		Files.writeString(this.directory.resolve(alias + ".key"), pem, StandardCharsets.US_ASCII);
	}

	private void signed(String alias, String dname, @Nullable String san, String eku) throws Exception {
		keytool("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", dname,
				"-validity", "2", "-keystore", alias + ".p12");
		keytool("-certreq", "-alias", alias, "-keystore", alias + ".p12", "-file", alias + ".csr");
		List<String> gencert = new ArrayList<>(List.of("-gencert", "-alias", "ca", "-keystore", "ca.p12", "-infile",
				alias + ".csr", "-outfile", alias + ".crt", "-rfc", "-validity", "2", "-ext", eku));
		if (san != null) {
			gencert.addAll(List.of("-ext", san));
		}
		keytool(gencert.toArray(String[]::new));
	}

	private void keytool(String... arguments) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
		command.addAll(List.of(arguments));
		command.addAll(List.of("-storetype", "PKCS12", "-storepass", new String(PASSWORD), "-noprompt"));
		Process process = new ProcessBuilder(command).directory(this.directory.toFile())
			.redirectErrorStream(true)
			.start();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
			process.destroyForcibly();
			throw new IllegalStateException("keytool " + arguments[0] + " failed: " + output);
		}
	}

	private PrivateKey privateKey(String alias) throws Exception {
		KeyStore store = KeyStore.getInstance("PKCS12");
		try (InputStream in = Files.newInputStream(this.directory.resolve(alias + ".p12"))) {
			store.load(in, PASSWORD);
		}
		return (PrivateKey) store.getKey(alias, PASSWORD);
	}

	private Certificate certificate(String file) throws Exception {
		try (InputStream in = Files.newInputStream(this.directory.resolve(file))) {
			return CertificateFactory.getInstance("X.509").generateCertificate(in);
		}
	}

	/**
	 * Returns the server's certificate (PEM).
	 * @return the file
	 */
	public Path serverCertificate() {
		return this.directory.resolve("server.crt");
	}

	/**
	 * Returns the server's private key (PKCS#8 PEM).
	 * @return the file
	 */
	public Path serverKey() {
		return this.directory.resolve("server.key");
	}

	/**
	 * Returns the client's certificate (PEM).
	 * @return the file
	 */
	public Path clientCertificate() {
		return this.directory.resolve("client.crt");
	}

	/**
	 * Returns the client's private key (PKCS#8 PEM).
	 * @return the file
	 */
	public Path clientKey() {
		return this.directory.resolve("client.key");
	}

	/**
	 * Returns the CA's certificate (PEM).
	 * @return the file
	 */
	public Path caCertificate() {
		return this.directory.resolve("ca.crt");
	}

	/**
	 * Returns trust managers that trust the test CA.
	 * @return the factory
	 */
	public TrustManagerFactory trustManagers() {
		try {
			KeyStore trust = KeyStore.getInstance("PKCS12");
			trust.load(null, null);
			trust.setCertificateEntry("ca", certificate("ca.crt"));
			TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
			factory.init(trust);
			return factory;
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Returns key managers with the client's certificate, signed by the test CA.
	 * @return the factory
	 */
	public KeyManagerFactory clientKeyManagers() {
		try {
			KeyStore keys = KeyStore.getInstance("PKCS12");
			keys.load(null, null);
			keys.setKeyEntry("client", privateKey("client"), PASSWORD,
					new Certificate[] { certificate("client.crt"), certificate("ca.crt") });
			KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
			factory.init(keys, PASSWORD);
			return factory;
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}
