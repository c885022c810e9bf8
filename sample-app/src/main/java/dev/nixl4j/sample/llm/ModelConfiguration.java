package dev.nixl4j.sample.llm;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;

import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.sample.SampleProperties;
import dev.nixl4j.sample.model.GgufFormatException;

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
		if (!LanguageModel.vectorApiAvailable()) {
			throw new ModelStartException(
					"the language model (sample.model.path) needs the JDK's Vector API, "
							+ "which this JVM was started without",
					"Start the JVM with --add-modules jdk.incubator.vector (bin/sample does).", null);
		}
		LanguageModel model;
		try {
			model = LanguageModel.load(path, properties.getModel().getThreads());
		}
		catch (IOException ex) {
			throw new ModelStartException("sample.model.path: cannot read the model file " + path + ": " + ex,
					"Set sample.model.path to SmolLM2's GGUF file: src/model/fetch-smollm2.sh fetches it and prints "
							+ "its path.",
					ex);
		}
		catch (GgufFormatException ex) {
			throw new ModelStartException(
					"sample.model.path: the model file " + path + " cannot be run: " + ex.getMessage(),
					"Give a llama-architecture GGUF file the engine reads (SmolLM2-135M-Instruct,"
							+ " src/model/fetch-smollm2.sh), or leave sample.model.path unset for the toy model.",
					ex);
		}
		try {
			model.requireLayout(layout);
		}
		catch (IllegalStateException ex) {
			model.close();
			throw new ModelStartException(String.valueOf(ex.getMessage()),
					"Give the KV cache the model's shape: the smollm2 profile sets nixl.kv.* for SmolLM2-135M "
							+ "(--spring.profiles.active=prefill,smollm2 or decode,smollm2).",
					ex);
		}
		return model;
	}

}
