/**
 * GPU memory from Java: the CUDA devices of this host ({@link dev.nixl4j.cuda.Cuda}),
 * device memory to register with NIXL as {@link dev.nixl4j.MemoryType#VRAM}
 * ({@link dev.nixl4j.cuda.GpuMemory}), and what was found of CUDA, or why nothing was
 * ({@link dev.nixl4j.cuda.CudaReport}).
 *
 * <p>
 * nixl4j calls the CUDA runtime ({@code libcudart}) through {@code java.lang.foreign} and
 * finds it where Python users have it: the {@code nvidia-cuda-runtime} wheels that
 * PyTorch installs, a CUDA toolkit, or the dynamic loader's path. No CUDA, or no device,
 * gives one typed answer ({@link dev.nixl4j.cuda.CudaException} with a
 * {@link dev.nixl4j.NixlStatus}), never a crash.
 */
@NullMarked
package dev.nixl4j.cuda;

import org.jspecify.annotations.NullMarked;
