package dev.nixl4j.autoconfigure.health;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * Whether any of a list of etcd endpoints accepts a TCP connection within a timeout: the
 * check behind the {@code etcd} detail of {@link NixlHealthIndicator} for NIXL's own etcd
 * exchange, whose client reports no failure back to Java.
 *
 * @param endpoints the endpoints, for example {@code http://10.0.0.5:2379}
 * @param timeout how long all attempts together may take
 */
record EtcdReachability(List<String> endpoints, Duration timeout) {

	EtcdReachability {
		endpoints = List.copyOf(endpoints);
	}

	/**
	 * Tries the endpoints in order until one accepts a connection.
	 * @return why none could be reached, or {@code null} when one was
	 */
	@Nullable String problem() {
		long deadline = System.nanoTime() + this.timeout.toNanos();
		String last = "no endpoint is configured";
		for (String endpoint : this.endpoints) {
			long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
			if (left < 1) {
				last = "no answer within " + this.timeout;
				break;
			}
			try (Socket socket = new Socket()) {
				URI uri = URI.create(endpoint.trim());
				int port = (uri.getPort() > 0) ? uri.getPort() : 2379;
				socket.connect(new InetSocketAddress(uri.getHost(), port), (int) Math.min(left, Integer.MAX_VALUE));
				return null;
			}
			catch (IOException | IllegalArgumentException ex) {
				last = endpoint + ": " + ex.getClass().getSimpleName()
						+ ((ex.getMessage() != null) ? " (" + ex.getMessage() + ")" : "");
			}
		}
		return "etcd at " + this.endpoints + " could not be reached within " + this.timeout + "; last: " + last;
	}

}
