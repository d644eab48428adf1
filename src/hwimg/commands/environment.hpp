#pragma once
// Everything hwimg takes from its environment, read in one place: the library below commands/
// gets these values as options and never calls getenv.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "hwimg/probe/probe.hpp"

namespace hwimg::commands {

// The probe's override variables (HWIMG_PROC_ROOT, HWIMG_SYS_ROOT, HWIMG_NVML_LIBRARY,
// HWIMG_CUDA_LIBRARY, HWIMG_OVERRIDE_CUDA, HWIMG_OVERRIDE_COMPUTE_CAPABILITY,
// HWIMG_OVERRIDE_CPU_LEVEL, HWIMG_CUDA_PROBE_TIMEOUT_MS) over the defaults.
[[nodiscard]] Result<probe::ProbeOptions> probe_options();

// The facts of `host_file` (--host) as written, else this host's, probed with the overrides above.
[[nodiscard]] Result<probe::HostFacts> host_facts(const std::optional<std::filesystem::path>& host_file);

// $DOCKER_CONFIG, else $HOME/.docker: where Docker keeps config.json.
[[nodiscard]] std::filesystem::path docker_config_dir();

// $XDG_CACHE_HOME/hwimg, else ~/.cache/hwimg: the blob cache of registry base and builder images.
[[nodiscard]] std::filesystem::path cache_root();

// $HWIMG_CUDA_ROOT, else /usr/local: where toolkits are looked for as cuda-X.Y.
[[nodiscard]] std::filesystem::path cuda_root();

// $SOURCE_DATE_EPOCH in seconds, 0 when unset or empty: the mtime and `created` time of what hwimg
// writes, so the same inputs give the same bytes. Not a non-negative integer: a usage error.
[[nodiscard]] Result<std::int64_t> source_date_epoch();

// What a build step on the host gets of hwimg's environment (docs/recipe.md): PATH, HOME,
// TMPDIR, TZ, LANG, LANGUAGE and every LC_* that is set; nothing else (no credentials).
[[nodiscard]] std::map<std::string, std::string> host_step_environment();

// Every variable of hwimg's environment, for a recipe's build.pass_env to pick from.
[[nodiscard]] std::map<std::string, std::string> process_environment();

// The variable's value; nullopt when it is not set.
[[nodiscard]] std::optional<std::string> variable(const char* name);

// Whether standard output / standard error is a terminal (progress is for people).
[[nodiscard]] bool stdout_is_terminal();
[[nodiscard]] bool stderr_is_terminal();

}  // namespace hwimg::commands
