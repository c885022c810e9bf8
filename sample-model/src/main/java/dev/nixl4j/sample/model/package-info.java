/**
 * The sample's model file: {@link dev.nixl4j.sample.model.GgufFile} reads a GGUF (version
 * 3) file over a memory mapping, checks every count, length, dimension, offset and size
 * against the file before it uses it, and exposes the metadata
 * ({@link dev.nixl4j.sample.model.GgufMetadata}), the tensor infos
 * ({@link dev.nixl4j.sample.model.GgufTensorInfo}) and each tensor's bytes as a
 * {@link java.lang.foreign.MemorySegment}; {@link dev.nixl4j.sample.model.Dequantize}
 * turns rows of F32, F16, Q8_0 and Q4_1 tensors into floats. A file that is not well
 * formed gets a {@link dev.nixl4j.sample.model.GgufFormatException} naming the key or
 * tensor and what was wrong.
 * <p>
 * {@link dev.nixl4j.sample.model.LlamaModel} runs a llama model (SmolLM2) from such a
 * file on the CPU with the Vector API ({@code --add-modules jdk.incubator.vector} at
 * compile and run time): quantized weights stay in the mapping, keys and values live in
 * {@link dev.nixl4j.sample.model.KvPages}, and {@link dev.nixl4j.sample.model.Sampler}
 * picks the next token.
 */
@NullMarked
package dev.nixl4j.sample.model;

import org.jspecify.annotations.NullMarked;
