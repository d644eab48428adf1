#include "hwimg/probe/probe.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#if defined(__aarch64__)
#include <sys/auxv.h>
#endif


#include "hwimg/probe/arm64_hwcaps.hpp"
#include "hwimg/probe/child_process.hpp"
#include "hwimg/probe/nvidia_cuda.hpp"
#include "hwimg/probe/nvidia_nvml.hpp"
#include "hwimg/probe/nvidia_procfs.hpp"
#include "hwimg/probe/overrides.hpp"
#include "hwimg/probe/x86_cpuid.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/json_reader.hpp"

namespace hwimg::probe {
namespace {

using EnvelopeJson = nlohmann::json;  // host_facts.cpp, batched with this file, has its own `json`
using Query = std::function<Result<NvidiaFacts>(const StepLog&)>;

// Runs one library query in a child; the child answers {"log": [...], "error": "..."} or
// {"log": [...], "nvidia": {...}}.
Result<NvidiaFacts> run_step(const Query& query, std::chrono::milliseconds timeout, const StepLog& log) {
  const auto in_child = [&] {
    EnvelopeJson envelope{{"log", EnvelopeJson::array()}};
    auto facts = query([&](std::string_view line) { envelope["log"].push_back(line); });
    if (facts) {
      envelope["nvidia"] = EnvelopeJson::parse(to_json(*facts));
    } else {
      envelope["error"] = facts.error().message;
    }
    return envelope.dump();
  };
  HWIMG_TRY_ASSIGN(const auto answer, run_in_child(in_child, timeout));
  const auto parsed = util::json::parse_object(answer);
  if (!parsed) {
    return fail("the probe process gave no answer");
  }
  const auto& envelope = *parsed;
  // The child's answer is read as any other: a library that scribbled on it gives an error.
  HWIMG_TRY_ASSIGN(const auto lines, with_context(util::json::strings_member(envelope, "log"),
                                                  "failed to read the probe process's answer: log"));
  for (const auto& line : lines.value_or(std::vector<std::string>{})) log(line);
  HWIMG_TRY_ASSIGN(const auto error, with_context(util::json::string_member(envelope, "error"),
                                                  "failed to read the probe process's answer: error"));
  if (error) return fail("{}", *error);
  const auto nvidia = envelope.find("nvidia");
  if (nvidia == envelope.end()) return fail("the probe process's answer holds no NVIDIA facts");
  return parse_nvidia_facts(nvidia->dump(), "from the probe process");
}

std::string summary(const NvidiaFacts& facts) {
  return fmt::format("driver {}, CUDA {}, {} GPU(s)", facts.driver_version.value_or("unknown"),
                     facts.cuda_driver_version.value_or("unknown"), facts.gpus.size());
}

// Completes NVML's answer from CUDA's where an older NVML lacked a function; GPUs are matched by
// UUID, never by index (NVML and CUDA number them differently).
void fill_from_cuda(NvidiaFacts& facts, const NvidiaFacts& cuda) {
  if (!facts.cuda_driver_version) {
    facts.cuda_driver_version = cuda.cuda_driver_version;
  }
  for (auto& gpu : facts.gpus) {
    const auto it = std::ranges::find(cuda.gpus, gpu.uuid, &GpuFacts::uuid);
    if (!gpu.compute_capability && !gpu.uuid.empty() && it != cuda.gpus.end()) {
      gpu.compute_capability = it->compute_capability;
    }
  }
}

// Loading a library that is not there costs a fork and a search of every library directory; a
// driver leaves traces that cost a stat each: /proc/driver/nvidia and /dev/nvidiactl (Linux),
// /dev/dxg (WSL), /etc/nv_tegra_release (Jetson). Libraries named by the user are always tried.
std::optional<std::string> reason_to_load_libraries(const ProbeOptions& options) {
  const ProbeOptions defaults;
  if (options.nvml_library != defaults.nvml_library || options.cuda_library != defaults.cuda_library) {
    return "libraries named by HWIMG_NVML_LIBRARY/HWIMG_CUDA_LIBRARY";
  }
  std::error_code error;
  for (const auto& path : {options.proc_root / "driver/nvidia", std::filesystem::path("/dev/nvidiactl"),
                           std::filesystem::path("/dev/dxg"), std::filesystem::path("/etc/nv_tegra_release")}) {
    if (std::filesystem::exists(path, error)) {
      return path.string();
    }
  }
  return std::nullopt;
}

// NVML first; the CUDA driver API when NVML is missing or left something out.
std::optional<NvidiaFacts> probe_libraries(const ProbeOptions& options, const StepLog& log) {
  std::optional<NvidiaFacts> facts;
  auto nvml = run_step([&](const StepLog& step_log) { return query_nvml(options.nvml_library, step_log); },
                       options.library_timeout, log);
  if (nvml) {
    log(fmt::format("nvml: {}", summary(*nvml)));
    facts = std::move(*nvml);
  } else {
    log(fmt::format("nvml: {}", nvml.error().message));
  }

  const bool incomplete =
      !facts || !facts->cuda_driver_version ||
      std::ranges::any_of(facts->gpus, [](const GpuFacts& gpu) { return !gpu.compute_capability; });
  if (incomplete) {
    auto cuda = run_step([&](const StepLog& step_log) { return query_cuda(options.cuda_library, step_log); },
                         options.library_timeout, log);
    if (!cuda) {
      log(fmt::format("cuda: {}", cuda.error().message));
    } else if (facts) {
      log(fmt::format("cuda: {} (completing NVML's answer)", summary(*cuda)));
      fill_from_cuda(*facts, *cuda);
    } else {
      cuda->driver_version = read_nvidia_driver_version(options.proc_root, options.sys_root);
      log(fmt::format("cuda: {}", summary(*cuda)));
      facts = std::move(*cuda);
    }
  } else {
    log("cuda: not needed");
  }

  return facts;
}

// The overrides after the probes, each recorded so that explanations show it.
Result<HostFacts> apply_overrides(HostFacts facts, const ProbeOptions& options) {
  const auto log = [&](const std::string& line) { options.output->log(fmt::format("probe: {}", line)); };
  if (options.cpuid) {
    facts.overrides.push_back(fmt::format("HWIMG_CPUID_FILE=\"{}\"", options.cpuid_file.string()));
    log(fmt::format("cpu: the CPUID values recorded in {} (HWIMG_CPUID_FILE)", options.cpuid_file.string()));
  }
  if (options.cuda_override) {
    facts.overrides.push_back(fmt::format("HWIMG_OVERRIDE_CUDA=\"{}\"", *options.cuda_override));
  }
  if (options.compute_capability_override) {
    apply_compute_capability_override(facts.nvidia, *options.compute_capability_override);
    const auto text = capability_list_text(*options.compute_capability_override);
    facts.overrides.push_back(fmt::format("HWIMG_OVERRIDE_COMPUTE_CAPABILITY=\"{}\"", text));
    log(fmt::format("nvidia: GPUs of compute capability \"{}\" from HWIMG_OVERRIDE_COMPUTE_CAPABILITY", text));
  }
  if (options.cpu_level_override != nullptr) {
    HWIMG_TRY(apply_cpu_level_override(facts.cpu, *options.cpu_level_override));
    facts.overrides.push_back(fmt::format("HWIMG_OVERRIDE_CPU_LEVEL=\"{}\"", options.cpu_level_override->name));
    log(fmt::format("cpu: a generic {} CPU from HWIMG_OVERRIDE_CPU_LEVEL", options.cpu_level_override->name));
  }
  return facts;
}

}  // namespace

CpuFacts probe_cpu([[maybe_unused]] const ProbeOptions& options) {
  if (options.cpuid) return decode_x86(*options.cpuid);
#if defined(__x86_64__)
  return decode_x86(read_cpuid());
#elif defined(__aarch64__)
  const auto cpuinfo = util::read_file(options.proc_root / "cpuinfo");
  return decode_arm64(getauxval(AT_HWCAP), getauxval(AT_HWCAP2), cpuinfo ? *cpuinfo : std::string());
#else
#error "hwimg probes amd64 and arm64 hosts only"
#endif
}

std::optional<NvidiaFacts> probe_nvidia(const ProbeOptions& options) {
  const StepLog log = [&](std::string_view line) { options.output->log(fmt::format("probe: {}", line)); };
  if (options.cuda_override && options.cuda_override->empty()) {
    log("nvidia: HWIMG_OVERRIDE_CUDA is empty: no CUDA, nothing probed");
    return std::nullopt;
  }

  std::optional<NvidiaFacts> facts;
  if (const auto reason = reason_to_load_libraries(options)) {
    log(fmt::format("nvidia: probing the libraries ({})", *reason));
    facts = probe_libraries(options, log);
  } else {
    log("nvidia: no /proc/driver/nvidia, /dev/nvidiactl, /dev/dxg or /etc/nv_tegra_release: "
        "libraries not loaded");
  }

  if (!facts) {
    facts = read_nvidia_procfs(options.proc_root, options.sys_root, log);
  } else {
    log("procfs: not needed");
  }

  if (options.cuda_override) {
    if (!facts) {
      facts = NvidiaFacts{.driver_version = std::nullopt, .cuda_driver_version = std::nullopt,
                          .source = "override", .gpus = {}};
    }
    facts->cuda_driver_version = *options.cuda_override;
    log(fmt::format("nvidia: CUDA driver version {} from HWIMG_OVERRIDE_CUDA", *options.cuda_override));
  }
  return facts;
}

Result<CpuFacts> probe_host_cpu(const ProbeOptions& options) {
  auto cpu = probe_cpu(options);
  if (options.cpu_level_override != nullptr) HWIMG_TRY(apply_cpu_level_override(cpu, *options.cpu_level_override));
  return cpu;
}

Result<HostFacts> probe_host(const ProbeOptions& options) {
  HostFacts facts;
  facts.cpu = probe_cpu(options);
  if (options.output->logging()) {
    options.output->log(fmt::format("probe: cpu: {} {}, {}, {} features", facts.cpu.vendor, facts.cpu.model_name,
                                    facts.cpu.microarch.value_or(facts.cpu.level ? hw::x86_level_name(*facts.cpu.level)
                                                                                 : std::string("no named target")),
                                    facts.cpu.features.size()));
  }
  facts.nvidia = probe_nvidia(options);
  return apply_overrides(std::move(facts), options);
}

}  // namespace hwimg::probe
