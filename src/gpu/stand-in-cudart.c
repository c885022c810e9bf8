/*
 * A stand-in for libcudart for the GPU check's dry run on a host without a GPU
 * (src/gpu/check.sh dry-run): "device" memory is host memory, copies are memcpy. The check
 * then registers that memory as DRAM (-Dgpucheck.memoryType=DRAM), so every step, the child
 * process and the JSON summary run for real; only CUDA and UCX's CUDA transports are absent.
 * FAKE_CUDA_DEVICES=0 answers "no device" (100), a negative count "driver too old" (35);
 * FAKE_CUDA_CORRUPT=1 flips the first byte of every copy to the host, which the check must see.
 */
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

static int devices(void) {
	const char *count = getenv("FAKE_CUDA_DEVICES");
	return count ? atoi(count) : 1;
}

int cudaGetDeviceCount(int *count) {
	if (devices() < 0) {
		return 35;
	}
	*count = devices();
	return devices() ? 0 : 100;
}

int cudaSetDevice(int device) { return 0; }

int cudaMalloc(void **pointer, size_t size) {
	*pointer = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
	return *pointer ? 0 : 2;
}

int cudaFree(void *pointer) {
	free(pointer);
	return 0;
}

int cudaMemcpy(void *target, const void *source, size_t size, int kind) {
	memcpy(target, source, size);
	if (kind == 2 && size > 0 && getenv("FAKE_CUDA_CORRUPT")) {
		((unsigned char *) target)[0] ^= 0xff;
	}
	return 0;
}

int cudaMemset(void *target, int value, size_t size) {
	memset(target, value, size);
	return 0;
}

int cudaDeviceSynchronize(void) { return 0; }

const char *cudaGetErrorString(int code) {
	switch (code) {
	case 100: return "no CUDA-capable device is detected";
	case 35: return "CUDA driver version is insufficient for CUDA runtime version";
	default: return "stand-in error";
	}
}

int cudaDriverGetVersion(int *version) { *version = 0; return 0; }

int cudaRuntimeGetVersion(int *version) { *version = 0; return 0; }

int cudaMemGetInfo(size_t *free, size_t *total) {
	*free = 0;
	*total = 0;
	return 0;
}

int cudaDeviceGetAttribute(int *value, int attribute, int device) {
	*value = 0;
	return 0;
}
