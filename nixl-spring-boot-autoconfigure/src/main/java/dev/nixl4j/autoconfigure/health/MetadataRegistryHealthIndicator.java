package dev.nixl4j.autoconfigure.health;

import dev.nixl4j.metadata.http.MetadataRegistryHandler;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of the HTTP metadata registry this application serves, contributed as
 * {@code nixlMetadataRegistry}: {@code UP} while it serves, with details of how full it
 * is: {@code basePath}, {@code entries} and {@code maxEntries}, {@code entryBytes} and
 * {@code maxTotalBytes}, and {@code entryTtl}. A full registry is still {@code UP}: it
 * answers reads and renewals, and refuses new entries with 507 until some expire. The
 * details hold no agent name, token or metadata.
 */
public class MetadataRegistryHealthIndicator extends AbstractHealthIndicator {

	private final MetadataRegistryHandler registry;

	/**
	 * Creates the indicator.
	 * @param registry the request handling of the served registry
	 */
	public MetadataRegistryHealthIndicator(MetadataRegistryHandler registry) {
		super("NIXL metadata registry health check failed");
		this.registry = registry;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		builder.up()
			.withDetail("basePath", this.registry.basePath())
			.withDetail("entries", this.registry.entries())
			.withDetail("maxEntries", this.registry.maxEntries())
			.withDetail("entryBytes", this.registry.entryBytes())
			.withDetail("maxTotalBytes", this.registry.maxTotalBytes())
			.withDetail("entryTtl", this.registry.entryTtl().toString());
	}

}
