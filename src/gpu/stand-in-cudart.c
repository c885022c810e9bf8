/*
 * A stand-in for libcudart for the GPU check's dry run on a host without a GPU
 * (src/gpu/check.sh dry-run): "device" memory is host memory, copies are memcpy. It exports
 * what nixl-core's CUDA binding (dev.nixl4j.internal.cuda.Cudart) calls, with the CUDA
 * runtime's signatures. The check then registers that memory as DRAM
 * (-Dgpucheck.memoryType=DRAM) and keeps its KV caches in host memory, so every step, the
 * child process and the JSON summary run for real; only CUDA and UCX's CUDA transports are
 * absent.
 * FAKE_CUDA_DEVICES=0 answers "no device" (100), a negative count "driver too old" (35);
 * FAKE_CUDA_CORRUPT=1 flips the first byte of every copy to the host, which the check must see.
 */
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <unistd.h>

static int current;

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

int cudaSetDevice(int device) {
	if (devices() <= 0) {
		return devices() ? 35 : 100;
	}
	if (device < 0 || device >= devices()) {
		return 101;
	}
	current = device;
	return 0;
}

int cudaGetDevice(int *device) {
	*device = current;
	return 0;
}

/*
 * cudaDeviceProp as the binding reads it: char name[256] at 0, size_t totalGlobalMem at 288
 * (after cudaUUID_t uuid, char luid[8], unsigned luidDeviceNodeMask and padding). The rest
 * is zeroed; the binding hands in at least 4 KiB. The plain name is what a CUDA 11 runtime
 * exports (12 and 13 export cudaGetDeviceProperties_v2): the binding falls back to it.
 */
int cudaGetDeviceProperties(void *properties, int device) {
	if (device < 0 || device >= devices()) {
		return 101;
	}
	memset(properties, 0, 1024);
	strcpy((char *) properties, "stand-in libcudart (host memory)");
	*(size_t *) ((char *) properties + 288) = (size_t) sysconf(_SC_PHYS_PAGES) * (size_t) sysconf(_SC_PAGESIZE);
	return 0;
}

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

const char *cudaGetErrorName(int code) {
	switch (code) {
	case 100: return "cudaErrorNoDevice";
	case 101: return "cudaErrorInvalidDevice";
	case 35: return "cudaErrorInsufficientDriver";
	case 2: return "cudaErrorMemoryAllocation";
	default: return "cudaErrorUnknown";
	}
}

const char *cudaGetErrorString(int code) {
	switch (code) {
	case 100: return "no CUDA-capable device is detected";
	case 35: return "CUDA driver version is insufficient for CUDA runtime version";
	case 101: return "invalid device ordinal";
	case 2: return "out of memory";
	default: return "stand-in error";
	}
}

int cudaDriverGetVersion(int *version) { *version = 0; return 0; }

int cudaRuntimeGetVersion(int *version) { *version = 0; return 0; }

int cudaDeviceGetAttribute(int *value, int attribute, int device) {
	*value = 0;
	return 0;
}
