#include "hwimg/probe/nvidia_nvml.hpp"

#include <array>

#include "hwimg/util/shared_library.hpp"

namespace hwimg::probe {
namespace {

// NVML's C interface (docs/compatibility.md#nvml; enums are 4-byte ints).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlMemory_v2_t {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
constexpr unsigned int k_memory_v2_version = 0x02000028;
constexpr nvmlReturn_t k_nvml_success = 0;
constexpr int k_buffer_size = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE, covers UUIDs and versions too

using NvmlInitFn = nvmlReturn_t();
using NvmlShutdownFn = nvmlReturn_t();
using NvmlErrorStringFn = const char*(nvmlReturn_t);
using NvmlDriverVersionFn = nvmlReturn_t(char*, unsigned int);
using NvmlCudaVersionFn = nvmlReturn_t(int*);
using NvmlCountFn = nvmlReturn_t(unsigned int*);
using NvmlHandleFn = nvmlReturn_t(unsigned int, nvmlDevice_t*);
using NvmlStringFn = nvmlReturn_t(nvmlDevice_t, char*, unsigned int);
using NvmlCapabilityFn = nvmlReturn_t(nvmlDevice_t, int*, int*);
using NvmlBrandFn = nvmlReturn_t(nvmlDevice_t, int*);
using NvmlMemoryFn = nvmlReturn_t(nvmlDevice_t, nvmlMemory_t*);
using NvmlMemoryV2Fn = nvmlReturn_t(nvmlDevice_t, nvmlMemory_v2_t*);

constexpr std::array<std::string_view, 31> k_return_names{
    "NVML_SUCCESS", "NVML_ERROR_UNINITIALIZED", "NVML_ERROR_INVALID_ARGUMENT", "NVML_ERROR_NOT_SUPPORTED",
    "NVML_ERROR_NO_PERMISSION", "NVML_ERROR_ALREADY_INITIALIZED", "NVML_ERROR_NOT_FOUND",
    "NVML_ERROR_INSUFFICIENT_SIZE", "NVML_ERROR_INSUFFICIENT_POWER", "NVML_ERROR_DRIVER_NOT_LOADED",
    "NVML_ERROR_TIMEOUT", "NVML_ERROR_IRQ_ISSUE", "NVML_ERROR_LIBRARY_NOT_FOUND", "NVML_ERROR_FUNCTION_NOT_FOUND",
    "NVML_ERROR_CORRUPTED_INFOROM", "NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_RESET_REQUIRED",
    "NVML_ERROR_OPERATING_SYSTEM", "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "NVML_ERROR_IN_USE", "NVML_ERROR_MEMORY",
    "NVML_ERROR_NO_DATA", "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", "NVML_ERROR_INSUFFICIENT_RESOURCES",
    "NVML_ERROR_FREQ_NOT_SUPPORTED", "NVML_ERROR_ARGUMENT_VERSION_MISMATCH", "NVML_ERROR_DEPRECATED",
    "NVML_ERROR_NOT_READY", "NVML_ERROR_GPU_NOT_FOUND", "NVML_ERROR_INVALID_STATE",
    "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED"};

std::string return_name(nvmlReturn_t code) {
  if (code >= 0 && static_cast<std::size_t>(code) < k_return_names.size()) {
    return fmt::format("{} ({})", k_return_names[static_cast<std::size_t>(code)], code);
  }
  return code == 999 ? "NVML_ERROR_UNKNOWN (999)" : fmt::format("NVML error {}", code);
}

// Calls `shutdown` when the query ends, whatever the outcome.
class Session {
public:
  explicit Session(NvmlShutdownFn* shutdown) : m_shutdown(shutdown) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() {
    if (m_shutdown != nullptr) {
      m_shutdown();
    }
  }

private:
  NvmlShutdownFn* m_shutdown;
};

template <typename Function>
Function* find_either(const util::SharedLibrary& library, const char* versioned, const char* plain) {
  auto* function = library.find<Function>(versioned);
  return function != nullptr ? function : library.find<Function>(plain);
}

}  // namespace

std::string nvml_brand_name(int brand) {
  static constexpr std::array<std::string_view, 17> names{
      "Unknown", "Quadro", "Tesla", "NVS", "Grid", "GeForce", "Titan", "NVIDIA Virtual Applications",
      "NVIDIA Virtual PC", "NVIDIA Virtual Compute Server", "NVIDIA RTX Virtual Workstation",
      "NVIDIA Cloud Gaming", "Quadro RTX", "NVIDIA RTX", "NVIDIA", "GeForce RTX", "Titan RTX"};
  if (brand >= 0 && static_cast<std::size_t>(brand) < names.size()) {
    return std::string(names[static_cast<std::size_t>(brand)]);
  }
  return std::to_string(brand);
}

Result<NvidiaFacts> query_nvml(const std::string& library_name, const StepLog& log) {
  HWIMG_TRY_ASSIGN(const auto library, util::SharedLibrary::open(library_name));
  auto* init = find_either<NvmlInitFn>(library, "nvmlInit_v2", "nvmlInit");
  auto* driver_version = library.find<NvmlDriverVersionFn>("nvmlSystemGetDriverVersion");
  auto* count = find_either<NvmlCountFn>(library, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
  auto* handle = find_either<NvmlHandleFn>(library, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
  if (init == nullptr || driver_version == nullptr || count == nullptr || handle == nullptr) {
    return fail("{} lacks nvmlInit_v2, nvmlSystemGetDriverVersion, nvmlDeviceGetCount_v2 or "
                "nvmlDeviceGetHandleByIndex_v2",
                library_name);
  }
  // Optional: absent from older drivers (nvidia-interfaces.md 1.7).
  auto* cuda_version = find_either<NvmlCudaVersionFn>(library, "nvmlSystemGetCudaDriverVersion_v2",
                                                  "nvmlSystemGetCudaDriverVersion");
  auto* name = library.find<NvmlStringFn>("nvmlDeviceGetName");
  auto* uuid = library.find<NvmlStringFn>("nvmlDeviceGetUUID");
  auto* capability = library.find<NvmlCapabilityFn>("nvmlDeviceGetCudaComputeCapability");
  auto* brand = library.find<NvmlBrandFn>("nvmlDeviceGetBrand");
  auto* memory_v2 = library.find<NvmlMemoryV2Fn>("nvmlDeviceGetMemoryInfo_v2");
  auto* memory = library.find<NvmlMemoryFn>("nvmlDeviceGetMemoryInfo");
  const auto skipped = [&](const char* function) { log(fmt::format("nvml: {} not exported, skipped", function)); };

  if (const auto code = init(); code != k_nvml_success) {
    return fail("nvmlInit_v2 returned {}", return_name(code));
  }
  const Session session(library.find<NvmlShutdownFn>("nvmlShutdown"));

  NvidiaFacts facts;
  facts.source = "nvml";
  char text[k_buffer_size] = {};
  if (const auto code = driver_version(text, sizeof text); code != k_nvml_success) {
    return fail("nvmlSystemGetDriverVersion returned {}", return_name(code));
  }
  facts.driver_version = std::string(text);
  if (cuda_version == nullptr) {
    skipped("nvmlSystemGetCudaDriverVersion_v2");
  } else if (int encoded = 0; cuda_version(&encoded) == k_nvml_success && encoded > 0) {
    facts.cuda_driver_version = cuda_version_text(encoded);
  }

  unsigned int devices = 0;
  if (const auto code = count(&devices); code != k_nvml_success) {
    return fail("nvmlDeviceGetCount_v2 returned {}", return_name(code));
  }
  for (unsigned int index = 0; index < devices; ++index) {
    nvmlDevice_t device = nullptr;
    if (const auto code = handle(index, &device); code != k_nvml_success) {
      // A GPU the caller may not open (cgroups) is counted but not usable: skip it.
      log(fmt::format("nvml: GPU {}: nvmlDeviceGetHandleByIndex_v2 returned {}, skipped", index, return_name(code)));
      continue;
    }
    GpuFacts gpu;
    gpu.index = static_cast<int>(index);
    if (name != nullptr && name(device, text, sizeof text) == k_nvml_success) {
      gpu.name = text;
    }
    if (uuid != nullptr && uuid(device, text, sizeof text) == k_nvml_success) {
      gpu.uuid = text;
    }
    if (int major = 0, minor = 0; capability != nullptr && capability(device, &major, &minor) == k_nvml_success) {
      gpu.compute_capability = fmt::format("{}.{}", major, minor);
    }
    if (int value = 0; brand != nullptr && brand(device, &value) == k_nvml_success) {
      gpu.brand = nvml_brand_name(value);
    }
    if (nvmlMemory_v2_t info{k_memory_v2_version, 0, 0, 0, 0};
        memory_v2 != nullptr && memory_v2(device, &info) == k_nvml_success) {
      gpu.memory_mib = info.total / (1024 * 1024);
    } else if (nvmlMemory_t old{}; memory != nullptr && memory(device, &old) == k_nvml_success) {
      gpu.memory_mib = old.total / (1024 * 1024);
    }
    facts.gpus.push_back(std::move(gpu));
  }
  if (capability == nullptr) {
    skipped("nvmlDeviceGetCudaComputeCapability");
  }
  if (brand == nullptr) {
    skipped("nvmlDeviceGetBrand");
  }
  return facts;
}

}  // namespace hwimg::probe
