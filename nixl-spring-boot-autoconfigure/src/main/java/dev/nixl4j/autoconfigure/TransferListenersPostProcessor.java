package dev.nixl4j.autoconfigure;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.TransferListener;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Adds every {@link TransferListener} bean to each {@link NixlAgent} bean once it is
 * created, in {@code @Order} / {@code Ordered} order, so that the listeners' order does
 * not depend on the order in which beans are created. Listener beans must not depend on
 * the agent.
 */
final class TransferListenersPostProcessor implements BeanPostProcessor {

	private final ObjectProvider<TransferListener> listeners;

	TransferListenersPostProcessor(ObjectProvider<TransferListener> listeners) {
		this.listeners = listeners;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof NixlAgent agent) {
			this.listeners.orderedStream().forEach(agent::addTransferListener);
		}
		return bean;
	}

}
