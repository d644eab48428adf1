#pragma once
// What `hwimg select --format docker-args|podman-args` prints (docs/running.md#select-arguments):
// the options that give the chosen variant its GPUs, then its reference, for
// `docker run $(hwimg select --format docker-args REF)`.

#include <string>
#include <string_view>
#include <vector>

#include "hwimg/select/selector.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::select {

enum class Runtime { docker, podman };

// How a variant gets its GPUs: none (CPU code only, or no GPU considered), through NVIDIA's
// container toolkit (which mounts the host's user-mode driver), or as bare device nodes for a
// variant that bundles its own driver (org.hwimg.driver.bundled).
enum class GpuAccess { none, toolkit, device_nodes };

[[nodiscard]] GpuAccess gpu_access(const Verdict& verdict, const HostView& host);

// The chosen variant's options and then `reference`, each one word: what `$(...)` splits back
// into the same arguments. `gpus` is the selection the host view was made with (its names go to
// the toolkit as given). Fails when nothing was chosen, when a word would hold white space, and
// for a MIG device asked of a bundled-driver variant (its node alone does not reach the MIG instance).
[[nodiscard]] Result<std::vector<std::string>> run_arguments(const Selection& selection, const GpuSelection& gpus,
                                                             std::string_view reference, Runtime runtime);

}  // namespace hwimg::select
