package dev.nixl4j.autoconfigure;

import java.util.List;

/**
 * {@link EtcdConnectionDetails} from {@code nixl.metadata.etcd.*}.
 */
final class PropertiesEtcdConnectionDetails implements EtcdConnectionDetails {

	private final NixlProperties.Etcd properties;

	PropertiesEtcdConnectionDetails(NixlProperties.Etcd properties) {
		this.properties = properties;
	}

	@Override
	public List<String> endpoints() {
		return List.copyOf(this.properties.getEndpoints());
	}

}
