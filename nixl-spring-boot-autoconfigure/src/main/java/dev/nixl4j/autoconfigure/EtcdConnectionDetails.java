package dev.nixl4j.autoconfigure;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.autoconfigure.service.connection.ConnectionDetails;
import org.springframework.boot.ssl.SslBundle;

/**
 * Where the etcd cluster of the "etcd" and "nixl-etcd" metadata exchanges lives, and how
 * the "etcd" exchange authenticates to it. By default it comes from
 * {@code nixl.metadata.etcd.*}; a bean of this type (for example from a Testcontainers
 * {@code @ServiceConnection}) takes precedence.
 */
public interface EtcdConnectionDetails extends ConnectionDetails {

	/**
	 * Returns the etcd endpoints.
	 * @return endpoints such as {@code http://127.0.0.1:2379}
	 */
	List<String> endpoints();

	/**
	 * Returns the user name for a cluster with authentication enabled.
	 * @return the user name, or {@code null} (the default) to connect without credentials
	 */
	default @Nullable String username() {
		return null;
	}

	/**
	 * Returns the password of {@link #username()}. Never log it.
	 * @return the password, or {@code null} (the default) when there is no user name
	 */
	default @Nullable String password() {
		return null;
	}

	/**
	 * Returns the TLS material for {@code https} endpoints: trust material for the
	 * cluster's certificates, and key material for a client certificate.
	 * @return the bundle, or {@code null} (the default) for the JDK's default trust and
	 * no client certificate
	 */
	default @Nullable SslBundle sslBundle() {
		return null;
	}

}
