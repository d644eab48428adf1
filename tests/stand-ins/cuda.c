/* A stand-in for NVIDIA's libcuda.so.1 with the CUDA driver API's real names, signatures and
 * values (docs/compatibility.md#cuda-driver-api). One build per scenario:
 *   STANDIN_h100  cuInit succeeds; one H100 (compute capability 9.0), CUDA 13.0
 *   STANDIN_hang  cuInit never returns, as on a wedged driver */
#include <stddef.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef int CUdevice_attribute;
typedef struct { char bytes[16]; } CUuuid;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_INVALID_DEVICE = 101
};
enum {
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
};

#if !defined(STANDIN_DRIVER_VERSION)
#define STANDIN_DRIVER_VERSION "580.65.06"
#endif
/* NVIDIA's libcuda carries its driver version as a string, which hwimg build checks when it bundles
 * one (docs/compatibility.md#user-mode-driver-libraries). */
const char standin_driver_version[] = STANDIN_DRIVER_VERSION;

static int initialised;

CUresult cuInit(unsigned int Flags) {
  if (Flags != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
#if defined(STANDIN_hang)
  for (;;) {
    pause();
  }
#endif
  initialised = 1;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* driverVersion) {
  if (driverVersion == NULL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *driverVersion = 13000;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  if (!initialised) {
    return CUDA_ERROR_NOT_INITIALIZED;
  }
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (!initialised) {
    return CUDA_ERROR_NOT_INITIALIZED;
  }
  if (ordinal != 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  static const char value[] = "NVIDIA H100 80GB HBM3";
  if (dev != 0 || len < (int)sizeof value) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  memcpy(name, value, sizeof value);
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  if (dev != 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

/* GPU-11111111-2222-3333-4444-555555555555, the UUID the NVML stand-in gives the same GPU. */
CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  static const unsigned char bytes[16] = {0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33,
                                          0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55};
  if (dev != 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  memcpy(uuid->bytes, bytes, sizeof bytes);
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  if (dev != 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *bytes = (size_t)81079 * 1024 * 1024;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char** pStr) {
  *pStr = error == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_UNKNOWN";
  return CUDA_SUCCESS;
}
