/**
 * Internal, not API: the binding of the CUDA runtime ({@code libcudart}) through
 * {@code java.lang.foreign} and its locator. Users reach it through
 * {@link dev.nixl4j.cuda.Cuda}; public types here are not promised to users.
 */
@NullMarked
package dev.nixl4j.internal.cuda;

import org.jspecify.annotations.NullMarked;
