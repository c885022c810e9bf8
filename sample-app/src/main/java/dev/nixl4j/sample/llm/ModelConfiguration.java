package dev.nixl4j.sample.llm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Objects;

import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.sample.SampleProperties;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The language model, when {@code sample.model.path} names one: loaded at start, checked
 * against the worker's KV-cache layout (another shape stops the start, naming the
 * property that differs), closed at shutdown.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "sample.model", name = "path")
public class ModelConfiguration {

	@Bean(destroyMethod = "close")
	LanguageModel languageModel(SampleProperties properties, KvCacheLayout layout) {
		Path path = Objects.requireNonNull(properties.getModel().getPath(), "sample.model.path");
		LanguageModel model;
		try {
			model = LanguageModel.load(path, properties.getModel().getThreads());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("sample.model.path: cannot read the model file " + path + ": " + ex, ex);
		}
		try {
			model.requireLayout(layout);
		}
		catch (RuntimeException ex) {
			model.close();
			throw ex;
		}
		return model;
	}

}
