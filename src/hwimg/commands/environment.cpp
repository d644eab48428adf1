#include "hwimg/commands/environment.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>

#include <unistd.h>

#include "hwimg/image/blob_cache.hpp"
#include "hwimg/commands/usage.hpp"
#include "hwimg/probe/overrides.hpp"
#include "hwimg/util/files.hpp"

extern char** environ;

namespace hwimg::commands {
namespace {

const char* environment(const char* name) {
  return std::getenv(name);
}

bool is_cuda_version(std::string_view text) {
  const auto dot = text.find('.');
  const auto digits = [](std::string_view part) {
    return !part.empty() && std::ranges::all_of(part, [](char c) { return c >= '0' && c <= '9'; });
  };
  return dot != std::string_view::npos && digits(text.substr(0, dot)) && digits(text.substr(dot + 1));
}

}  // namespace

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> result;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals != std::string_view::npos) result.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return result;
}

std::map<std::string, std::string> host_step_environment() {
  static constexpr std::array<std::string_view, 6> passed{"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LANGUAGE"};
  auto result = process_environment();
  std::erase_if(result, [](const auto& entry) {
    return !entry.first.starts_with("LC_") && std::ranges::find(passed, entry.first) == passed.end();
  });
  return result;
}

Result<probe::ProbeOptions> probe_options() {
  probe::ProbeOptions options;
  if (const char* value = environment("HWIMG_PROC_ROOT"); value != nullptr && *value != '\0') {
    options.proc_root = value;
  }
  if (const char* value = environment("HWIMG_SYS_ROOT"); value != nullptr && *value != '\0') {
    options.sys_root = value;
  }
  if (const char* value = environment("HWIMG_NVML_LIBRARY"); value != nullptr && *value != '\0') {
    options.nvml_library = value;
  }
  if (const char* value = environment("HWIMG_CUDA_LIBRARY"); value != nullptr && *value != '\0') {
    options.cuda_library = value;
  }
  if (const char* value = environment("HWIMG_OVERRIDE_CUDA"); value != nullptr) {
    if (*value != '\0' && !is_cuda_version(value)) {
      return fail_usage("failed to read HWIMG_OVERRIDE_CUDA: expected a CUDA version such as \"12.4\" or "
                        "nothing, got \"{}\"",
                        value);
    }
    options.cuda_override = value;
  }
  if (const char* value = environment("HWIMG_OVERRIDE_COMPUTE_CAPABILITY"); value != nullptr) {
    HWIMG_TRY_ASSIGN(options.compute_capability_override, probe::parse_compute_capability_override(value));
    if (!options.compute_capability_override->empty() && options.cuda_override && options.cuda_override->empty()) {
      return fail_usage("failed to read HWIMG_OVERRIDE_COMPUTE_CAPABILITY: it names GPUs, but HWIMG_OVERRIDE_CUDA "
                        "is empty (no CUDA)");
    }
  }
  if (const char* value = environment("HWIMG_OVERRIDE_CPU_LEVEL"); value != nullptr && *value != '\0') {
    HWIMG_TRY_ASSIGN(options.cpu_level_override, probe::parse_cpu_level_override(value));
  }
  if (const char* value = environment("HWIMG_CPUID_FILE"); value != nullptr && *value != '\0') {
    HWIMG_TRY_ASSIGN(const auto text, as_usage_error(with_context(util::read_file(value), "failed to read HWIMG_CPUID_FILE")));
    HWIMG_TRY_ASSIGN(options.cpuid, as_usage_error(with_context(probe::parse_cpuid_dump(text, value),
                                                                "failed to read HWIMG_CPUID_FILE")));
    options.cpuid_file = value;
  }
  if (const char* value = environment("HWIMG_CUDA_PROBE_TIMEOUT_MS"); value != nullptr && *value != '\0') {
    const std::string_view text = value;
    long milliseconds = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), milliseconds);
    if (ec != std::errc() || end != text.data() + text.size() || milliseconds <= 0) {
      return fail_usage("failed to read HWIMG_CUDA_PROBE_TIMEOUT_MS: expected a positive number of "
                        "milliseconds, got \"{}\"",
                        text);
    }
    options.library_timeout = std::chrono::milliseconds(milliseconds);
  }
  return options;
}

Result<probe::HostFacts> host_facts(const std::optional<std::filesystem::path>& host_file) {
  if (host_file) {
    HWIMG_TRY_ASSIGN(const auto text, util::read_file(*host_file));
    return probe::parse_host_facts(text, host_file->string());
  }
  HWIMG_TRY_ASSIGN(const auto options, probe_options());
  return probe::probe_host(options);
}

std::filesystem::path docker_config_dir() {
  if (const char* dir = environment("DOCKER_CONFIG"); dir != nullptr && *dir != '\0') return dir;
  const char* home = environment("HOME");
  return std::filesystem::path(home != nullptr ? home : "/") / ".docker";
}

std::filesystem::path cache_root() {
  return image::default_cache_root(environment("XDG_CACHE_HOME"), environment("HOME"));
}

std::filesystem::path cuda_root() {
  const char* root = environment("HWIMG_CUDA_ROOT");
  return root != nullptr && *root != '\0' ? root : "/usr/local";
}

Result<std::int64_t> source_date_epoch() {
  const char* value = environment("SOURCE_DATE_EPOCH");
  if (value == nullptr || *value == '\0') return 0;
  const std::string_view text = value;
  std::int64_t seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || seconds < 0) {
    return fail_usage("invalid SOURCE_DATE_EPOCH \"{}\": expected a non-negative number of seconds", text);
  }
  return seconds;
}

std::optional<std::string> variable(const char* name) {
  const char* value = environment(name);
  return value == nullptr ? std::nullopt : std::optional<std::string>(value);
}

bool stdout_is_terminal() {
  return ::isatty(STDOUT_FILENO) == 1;
}

bool stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) == 1;
}

}  // namespace hwimg::commands
