/* A stand-in for NVIDIA's libnvidia-ml.so.1 with NVML's real names, signatures and enum values
 * (docs/compatibility.md#nvml), so the probe's real dlopen/dlsym path runs on a
 * machine without a GPU. One build per scenario:
 *   STANDIN_h100    one H100, driver 580.65.06, CUDA 13.0
 *   STANDIN_two     an H100 and an L4, plus a third GPU the caller may not open
 *   STANDIN_old     an old driver: no nvmlDeviceGetCudaComputeCapability, no _v2 CUDA version,
 *                   no brand, no nvmlDeviceGetMemoryInfo_v2
 *   STANDIN_broken  nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED
 * STANDIN_DRIVER_VERSION="535.247.01" overrides the driver version of any of them. */
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;

enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25
};
enum { NVML_BRAND_NVIDIA = 14 };

struct nvmlDevice_st {
  const char* name;
  const char* uuid;
  int major, minor;
  unsigned long long memory_mib;
  int usable;
};

#if defined(STANDIN_two)
static struct nvmlDevice_st devices[] = {
    {"NVIDIA H100 80GB HBM3", "GPU-11111111-2222-3333-4444-555555555555", 9, 0, 81559, 1},
    {"NVIDIA L4", "GPU-66666666-7777-8888-9999-aaaaaaaaaaaa", 8, 9, 23034, 1},
    {"NVIDIA L4", "GPU-bbbbbbbb-cccc-dddd-eeee-ffffffffffff", 8, 9, 23034, 0},
};
#else
static struct nvmlDevice_st devices[] = {
    {"NVIDIA H100 80GB HBM3", "GPU-11111111-2222-3333-4444-555555555555", 9, 0, 81559, 1},
};
#endif
static const unsigned int device_count = sizeof devices / sizeof devices[0];

#if defined(STANDIN_DRIVER_VERSION)
static const char* driver_version = STANDIN_DRIVER_VERSION; /* a bundled driver's, tests/integration/test_build_driver.sh */
#elif defined(STANDIN_old)
static const char* driver_version = "450.80.02";
#else
static const char* driver_version = "580.65.06";
#endif

static int initialised;

static nvmlReturn_t copy_string(const char* value, char* buffer, unsigned int length) {
  if (buffer == NULL) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (strlen(value) + 1 > length) {
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  memcpy(buffer, value, strlen(value) + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) {
#if defined(STANDIN_broken)
  return NVML_ERROR_DRIVER_NOT_LOADED;
#else
  initialised = 1;
  return NVML_SUCCESS;
#endif
}

nvmlReturn_t nvmlShutdown(void) {
  initialised = 0;
  return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t result) {
  return result == NVML_SUCCESS ? "Success" : "Error";
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return initialised ? copy_string(driver_version, version, length) : NVML_ERROR_UNINITIALIZED;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* cudaDriverVersion) {
  if (!initialised) {
    return NVML_ERROR_UNINITIALIZED;
  }
#if defined(STANDIN_old)
  *cudaDriverVersion = 11000;
#else
  *cudaDriverVersion = 13000;
#endif
  return NVML_SUCCESS;
}

#if !defined(STANDIN_old)
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion) {
  return nvmlSystemGetCudaDriverVersion(cudaDriverVersion);
}
#endif

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  if (!initialised) {
    return NVML_ERROR_UNINITIALIZED;
  }
  *deviceCount = device_count;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (!initialised) {
    return NVML_ERROR_UNINITIALIZED;
  }
  if (index >= device_count || device == NULL) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (!devices[index].usable) {
    return NVML_ERROR_NO_PERMISSION;
  }
  *device = &devices[index];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return copy_string(device->name, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return copy_string(device->uuid, uuid, length);
}

#if !defined(STANDIN_old)
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  *major = device->major;
  *minor = device->minor;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, int* type) {
  (void)device;
  *type = NVML_BRAND_NVIDIA;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  if (memory->version != 0x02000028U) {
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  }
  memory->total = device->memory_mib * 1024ULL * 1024ULL;
  memory->reserved = 0;
  memory->free = memory->total;
  memory->used = 0;
  return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  memory->total = device->memory_mib * 1024ULL * 1024ULL;
  memory->free = memory->total;
  memory->used = 0;
  return NVML_SUCCESS;
}
