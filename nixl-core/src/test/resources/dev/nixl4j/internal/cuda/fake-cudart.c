/*
 * A stand-in for libcudart, for tests on hosts without a GPU: it exports the functions
 * nixl4j binds with the CUDA runtime's signatures, and "device memory" is host memory.
 * FAKE_CUDA_DEVICES sets the device count (0 answers cudaErrorNoDevice);
 * FAKE_CUDA_SYNC_FAILS_ON=N makes cudaDeviceSynchronize answer cudaErrorIllegalAddress
 * while device N is current, as after a kernel's bad access. Built with
 * -DNO_MALLOC it lacks cudaMalloc, as a runtime that misses a function would.
 */
#include <stdlib.h>
#include <string.h>

static int devices(void) {
	const char *value = getenv("FAKE_CUDA_DEVICES");
	return value ? atoi(value) : 0;
}

static int current;

int cudaGetDeviceCount(int *count) {
	*count = devices();
	return (*count == 0) ? 100 : 0;
}

int cudaSetDevice(int device) {
	if (devices() == 0) {
		return 100;
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

#ifndef NO_MALLOC
int cudaMalloc(void **pointer, size_t size) {
	*pointer = malloc(size);
	return (*pointer == NULL) ? 2 : 0;
}
#endif

int cudaFree(void *pointer) {
	free(pointer);
	return 0;
}

int cudaMemcpy(void *destination, const void *source, size_t count, int kind) {
	if (kind < 1 || kind > 3) {
		return 21;
	}
	memmove(destination, source, count);
	return 0;
}

int cudaMemset(void *pointer, int value, size_t count) {
	memset(pointer, value, count);
	return 0;
}

int cudaDeviceSynchronize(void) {
	const char *failing = getenv("FAKE_CUDA_SYNC_FAILS_ON");
	if (failing && atoi(failing) == current) {
		return 700;
	}
	return 0;
}

int cudaDriverGetVersion(int *version) {
	*version = 13000;
	return 0;
}

int cudaRuntimeGetVersion(int *version) {
	*version = 12080;
	return 0;
}

int cudaDeviceGetAttribute(int *value, int attribute, int device) {
	*value = (attribute == 75) ? 9 : 0;
	return 0;
}

int cudaGetDeviceProperties_v2(void *properties, int device) {
	strcpy((char *) properties, "Fake GPU");
	*(size_t *) ((char *) properties + 288) = (size_t) 80 << 30;
	return 0;
}

const char *cudaGetErrorName(int error) {
	switch (error) {
	case 100: return "cudaErrorNoDevice";
	case 101: return "cudaErrorInvalidDevice";
	case 700: return "cudaErrorIllegalAddress";
	default: return "cudaErrorUnknown";
	}
}

const char *cudaGetErrorString(int error) {
	switch (error) {
	case 100: return "no CUDA-capable device is detected";
	case 101: return "invalid device ordinal";
	case 700: return "an illegal memory access was encountered";
	default: return "unknown error";
	}
}
