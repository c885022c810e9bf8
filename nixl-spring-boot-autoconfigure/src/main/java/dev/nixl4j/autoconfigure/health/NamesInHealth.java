package dev.nixl4j.autoconfigure.health;

import java.util.function.BooleanSupplier;

import dev.nixl4j.autoconfigure.NixlProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.health.actuate.endpoint.HealthEndpointGroup;
import org.springframework.boot.health.actuate.endpoint.HealthEndpointGroups;
import org.springframework.util.ClassUtils;

/**
 * Whether the {@code nixl} health details show names and paths, by the rule of the
 * {@code nixl} endpoint ({@code nixl.endpoint.show-names}): {@code always} shows them,
 * {@code never} hides them, and {@code when-authorized} (the default) shows them only
 * when no caller without a principal can read the details: no health group that holds
 * {@code nixl} (the endpoint's own included) shows details to an anonymous caller
 * ({@code management.endpoint.health.show-details} {@code never} or
 * {@code when-authorized}), and {@code nixl.endpoint.roles} is empty (the health
 * endpoint's roles are its own). Where there is no health endpoint, only this process
 * reads the details, and they show names. Decided at the first check that finds the
 * health endpoint's groups.
 */
final class NamesInHealth implements BooleanSupplier {

	private static final String CONTRIBUTOR = "nixl";

	private static final boolean ACTUATOR_PRESENT = ClassUtils.isPresent(
			"org.springframework.boot.health.actuate.endpoint.HealthEndpointGroups",
			NamesInHealth.class.getClassLoader())
			&& ClassUtils.isPresent("org.springframework.boot.actuate.endpoint.SecurityContext",
					NamesInHealth.class.getClassLoader());

	private final NixlProperties.Endpoint endpoint;

	private final BeanFactory beans;

	private volatile @Nullable Boolean decided;

	NamesInHealth(NixlProperties.Endpoint endpoint, BeanFactory beans) {
		this.endpoint = endpoint;
		this.beans = beans;
	}

	@Override
	public boolean getAsBoolean() {
		Boolean known = this.decided;
		if (known != null) {
			return known;
		}
		return switch (this.endpoint.getShowNames()) {
			case ALWAYS -> true;
			case NEVER -> false;
			case WHEN_AUTHORIZED -> {
				if (!this.endpoint.getRoles().isEmpty()) {
					yield false;
				}
				Boolean anonymous = ACTUATOR_PRESENT ? Groups.detailsShownToAnonymousCallers(this.beans) : null;
				if (anonymous == null) {
					// no health endpoint (yet): nobody outside reads the details now
					yield true;
				}
				this.decided = !anonymous;
				yield !anonymous;
			}
		};
	}

	/** Kept apart, so that it is loaded only with the health endpoint's classes. */
	private static final class Groups {

		private Groups() {
		}

		/**
		 * Whether a caller without a principal reads the details of the {@code nixl}
		 * contributor; {@code null} when there is no health endpoint.
		 */
		static @Nullable Boolean detailsShownToAnonymousCallers(BeanFactory beans) {
			HealthEndpointGroups groups = beans.getBeanProvider(HealthEndpointGroups.class).getIfAvailable();
			if (groups == null) {
				return null;
			}
			// the primary group serves /actuator/health/nixl whatever its members
			if (groups.getPrimary().showDetails(SecurityContext.NONE)) {
				return true;
			}
			for (String name : groups.getNames()) {
				HealthEndpointGroup group = groups.get(name);
				if (group != null && group.isMember(CONTRIBUTOR) && group.showDetails(SecurityContext.NONE)) {
					return true;
				}
			}
			return false;
		}

	}

}
