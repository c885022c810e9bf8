package dev.nixl4j.autoconfigure;

import java.util.List;

import org.springframework.boot.autoconfigure.service.connection.ConnectionDetails;

/**
 * Where the etcd cluster of the "etcd" and "nixl-etcd" metadata exchanges lives. By default it
 * comes from {@code nixl.metadata.etcd.endpoints}; a bean of this type (for example from a
 * Testcontainers {@code @ServiceConnection}) takes precedence.
 */
public interface EtcdConnectionDetails extends ConnectionDetails {

	/**
	 * Returns the etcd endpoints.
	 * @return endpoints such as {@code http://127.0.0.1:2379}
	 */
	List<String> endpoints();

}
