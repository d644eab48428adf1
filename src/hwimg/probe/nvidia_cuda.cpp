#include "hwimg/probe/nvidia_cuda.hpp"

#include <cstdlib>

#include "hwimg/util/shared_library.hpp"

namespace hwimg::probe {
namespace {

// The CUDA driver API's C interface (docs/compatibility.md#cuda-driver-api).
using CUresult = int;
using CUdevice = int;
struct CUuuid {
  unsigned char bytes[16];
};
constexpr CUresult k_success = 0;
constexpr CUresult k_stub_library = 34;
constexpr CUresult k_no_device = 100;
constexpr int k_attribute_major = 75;
constexpr int k_attribute_minor = 76;

using InitFn = CUresult(unsigned int);
using VersionFn = CUresult(int*);
using CountFn = CUresult(int*);
using DeviceFn = CUresult(CUdevice*, int);
using NameFn = CUresult(char*, int, CUdevice);
using AttributeFn = CUresult(int*, int, CUdevice);
using UuidFn = CUresult(CUuuid*, CUdevice);
using TotalMemFn = CUresult(std::size_t*, CUdevice);
using ErrorNameFn = CUresult(CUresult, const char**);

std::string uuid_text(const CUuuid& uuid) {
  std::string text = "GPU-";
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      text += '-';
    }
    text += fmt::format("{:02x}", uuid.bytes[i]);
  }
  return text;
}

}  // namespace

Result<NvidiaFacts> query_cuda(const std::string& library_name, const StepLog& log) {
  HWIMG_TRY_ASSIGN(const auto library, util::SharedLibrary::open(library_name));
  auto* init = library.find<InitFn>("cuInit");
  auto* version = library.find<VersionFn>("cuDriverGetVersion");
  auto* count = library.find<CountFn>("cuDeviceGetCount");
  auto* get = library.find<DeviceFn>("cuDeviceGet");
  auto* attribute = library.find<AttributeFn>("cuDeviceGetAttribute");
  if (init == nullptr || version == nullptr || count == nullptr || get == nullptr || attribute == nullptr) {
    return fail("{} lacks cuInit, cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet or cuDeviceGetAttribute",
                library_name);
  }
  auto* name = library.find<NameFn>("cuDeviceGetName");
  auto* uuid = library.find<UuidFn>("cuDeviceGetUuid_v2");
  if (uuid == nullptr) {
    uuid = library.find<UuidFn>("cuDeviceGetUuid");
  }
  // The plain cuDeviceTotalMem export is the 32-bit CUDA 2.0 ABI.
  auto* total_memory = library.find<TotalMemFn>("cuDeviceTotalMem_v2");
  auto* error_name = library.find<ErrorNameFn>("cuGetErrorName");
  const auto describe = [&](CUresult code) {
    const char* text = nullptr;
    if (error_name != nullptr && error_name(code, &text) == k_success && text != nullptr) {
      return fmt::format("{} ({})", text, code);
    }
    return fmt::format("CUDA error {}", code);
  };

  // Probe every GPU of the host, as conda does, whatever this process was told to use.
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  const auto init_code = init(0);
  if (init_code == k_stub_library) {
    return fail("{} is the CUDA toolkit's stub, not a driver", library_name);
  }
  if (init_code != k_success && init_code != k_no_device) {
    return fail("cuInit returned {}", describe(init_code));
  }
  NvidiaFacts facts;
  facts.source = "cuda";
  int encoded = 0;
  if (const auto code = version(&encoded); code != k_success) {
    return fail("cuDriverGetVersion returned {}", describe(code));
  }
  facts.cuda_driver_version = cuda_version_text(encoded);
  if (init_code == k_no_device) {
    log("cuda: cuInit found no device");
    return facts;
  }
  int devices = 0;
  if (const auto code = count(&devices); code != k_success) {
    return fail("cuDeviceGetCount returned {}", describe(code));
  }
  for (int ordinal = 0; ordinal < devices; ++ordinal) {
    CUdevice device = 0;
    int major = 0;
    int minor = 0;
    if (get(&device, ordinal) != k_success || attribute(&major, k_attribute_major, device) != k_success ||
        attribute(&minor, k_attribute_minor, device) != k_success) {
      log(fmt::format("cuda: device {}: no compute capability, skipped", ordinal));
      continue;
    }
    GpuFacts gpu;
    gpu.index = ordinal;
    gpu.compute_capability = fmt::format("{}.{}", major, minor);
    char text[256] = {};
    if (name != nullptr && name(text, sizeof text, device) == k_success) {
      gpu.name = text;
    }
    if (CUuuid value{}; uuid != nullptr && uuid(&value, device) == k_success) {
      gpu.uuid = uuid_text(value);
    }
    if (std::size_t bytes = 0; total_memory != nullptr && total_memory(&bytes, device) == k_success) {
      gpu.memory_mib = bytes / (1024 * 1024);
    }
    facts.gpus.push_back(std::move(gpu));
  }
  return facts;
}

}  // namespace hwimg::probe
