package dev.nixl4j.autoconfigure.testcontainers;

import java.util.List;

import dev.nixl4j.autoconfigure.EtcdConnectionDetails;
import org.testcontainers.containers.GenericContainer;

import org.springframework.boot.testcontainers.service.connection.ContainerConnectionDetailsFactory;
import org.springframework.boot.testcontainers.service.connection.ContainerConnectionSource;

/**
 * {@link EtcdConnectionDetails} from an etcd container annotated with
 * {@code @ServiceConnection}: a {@link GenericContainer} named {@code "etcd"} by the
 * annotation, or running an image whose repository is {@code etcd}, {@code coreos/etcd}
 * (quay.io) or {@code etcd-development/etcd} (gcr.io). The container must expose etcd's
 * client port {@value #CLIENT_PORT} and advertise a client URL that clients can use (for
 * example {@code --advertise-client-urls=http://0.0.0.0:2379}).
 */
class EtcdContainerConnectionDetailsFactory
		extends ContainerConnectionDetailsFactory<GenericContainer<?>, EtcdConnectionDetails> {

	/** etcd's client port inside the container. */
	static final int CLIENT_PORT = 2379;

	EtcdContainerConnectionDetailsFactory() {
		super(List.of("etcd", "coreos/etcd", "etcd-development/etcd"));
	}

	@Override
	protected EtcdConnectionDetails getContainerConnectionDetails(
			ContainerConnectionSource<GenericContainer<?>> source) {
		return new EtcdContainerConnectionDetails(source);
	}

	/**
	 * The endpoint of the container's mapped client port.
	 */
	static final class EtcdContainerConnectionDetails extends ContainerConnectionDetails<GenericContainer<?>>
			implements EtcdConnectionDetails {

		EtcdContainerConnectionDetails(ContainerConnectionSource<GenericContainer<?>> source) {
			super(source);
		}

		@Override
		public List<String> endpoints() {
			GenericContainer<?> container = getContainer();
			return List.of("http://" + container.getHost() + ":" + container.getMappedPort(CLIENT_PORT));
		}

	}

}
