package dev.nixl4j.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The test-only TLS material in {@code src/test/resources/tls} (see the README there): a
 * self-signed certificate for {@code localhost} and {@code 127.0.0.1}.
 */
public final class TestTls {

	/** Class path location of the PKCS12 key store (key and certificate). */
	public static final String KEY_STORE = "tls/registry.p12";

	/** Class path location of the certificate alone, PEM. */
	public static final String CERTIFICATE = "tls/registry.crt";

	/** Password of the key store and of its key. */
	public static final String PASSWORD = "nixl4j-test";

	private TestTls() {
	}

	/**
	 * A TLS context that presents the test certificate.
	 * @return the server's context
	 */
	public static SSLContext serverContext() {
		try (InputStream in = resource(KEY_STORE)) {
			KeyStore keys = KeyStore.getInstance("PKCS12");
			keys.load(in, PASSWORD.toCharArray());
			KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
			factory.init(keys, PASSWORD.toCharArray());
			SSLContext context = SSLContext.getInstance("TLS");
			context.init(factory.getKeyManagers(), null, null);
			return context;
		}
		catch (IOException | GeneralSecurityException ex) {
			throw new IllegalStateException("cannot load " + KEY_STORE, ex);
		}
	}

	/**
	 * A TLS context that trusts the test certificate and nothing else.
	 * @return the client's context
	 */
	public static SSLContext clientContext() {
		try (InputStream in = resource(CERTIFICATE)) {
			Certificate certificate = CertificateFactory.getInstance("X.509").generateCertificate(in);
			KeyStore trusted = KeyStore.getInstance("PKCS12");
			trusted.load(null, null);
			trusted.setCertificateEntry("registry", certificate);
			TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
			factory.init(trusted);
			SSLContext context = SSLContext.getInstance("TLS");
			context.init(null, factory.getTrustManagers(), null);
			return context;
		}
		catch (IOException | GeneralSecurityException ex) {
			throw new IllegalStateException("cannot load " + CERTIFICATE, ex);
		}
	}

	private static InputStream resource(String location) {
		InputStream in = TestTls.class.getClassLoader().getResourceAsStream(location);
		if (in == null) {
			throw new IllegalStateException("missing test resource " + location);
		}
		return in;
	}

}
