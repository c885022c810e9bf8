package dev.nixl4j.autoconfigure;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;

/**
 * {@link EtcdConnectionDetails} from {@code nixl.metadata.etcd.*}.
 */
final class PropertiesEtcdConnectionDetails implements EtcdConnectionDetails {

	/** The property naming the SSL bundle of https etcd endpoints. */
	static final String SSL_BUNDLE_PROPERTY = "nixl.metadata.etcd.ssl-bundle";

	private final NixlProperties.Etcd properties;

	private final @Nullable SslBundles sslBundles;

	PropertiesEtcdConnectionDetails(NixlProperties.Etcd properties, @Nullable SslBundles sslBundles) {
		this.properties = properties;
		this.sslBundles = sslBundles;
	}

	@Override
	public List<String> endpoints() {
		return List.copyOf(this.properties.getEndpoints());
	}

	@Override
	public @Nullable String username() {
		return this.properties.getUsername();
	}

	@Override
	public @Nullable String password() {
		return this.properties.getPassword();
	}

	@Override
	public @Nullable SslBundle sslBundle() {
		String name = this.properties.getSslBundle();
		if (name == null) {
			return null;
		}
		if (this.sslBundles == null) {
			throw new InvalidConfigurationPropertyValueException(SSL_BUNDLE_PROPERTY, name,
					"no SSL bundles are configured in this application (spring.ssl.bundle.*)");
		}
		try {
			return this.sslBundles.getBundle(name);
		}
		catch (NoSuchSslBundleException ex) {
			throw new InvalidConfigurationPropertyValueException(SSL_BUNDLE_PROPERTY, name,
					"no SSL bundle of that name is configured; define it under spring.ssl.bundle.jks." + name
							+ " or spring.ssl.bundle.pem." + name,
					ex);
		}
	}

	@Override
	public String toString() {
		return "PropertiesEtcdConnectionDetails[endpoints=" + this.properties.getEndpoints() + ", user="
				+ this.properties.getUsername() + "]";
	}

}
