#pragma once
// `hwimg select REF`: the one variant of REF that runs on this host (docs/selection.md).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "hwimg/commands/registry_flags.hpp"
#include "hwimg/select/image_source.hpp"
#include "hwimg/select/selector.hpp"

namespace hwimg::commands {

// docker_args and podman_args: the run options and the reference (docs/running.md#select-arguments).
enum class SelectFormat { reference, json, docker_args, podman_args };
enum class Explain { no, yes };

// What `select` and `check` share: an image, the host to judge it against and how to explain.
struct JudgeArguments {
  std::string reference;                            // oci:DIR[:TAG] or a registry reference
  std::optional<std::filesystem::path> host_file;  // facts instead of a live probe
  std::optional<std::string> gpus;                  // --gpus; absent: NVIDIA_VISIBLE_DEVICES, else all
  Explain explain = Explain::no;
  RegistryFlags registry;
};

struct SelectArguments {
  JudgeArguments judge;
  SelectFormat format = SelectFormat::reference;
};

// REF's variants judged against this host (or the facts file) and the GPUs the container gets
// (`gpus`, else NVIDIA_VISIBLE_DEVICES): what `select` and `check` report.
struct JudgedImage {
  select::ImageSource source;
  select::Selection selection;
  select::GpuSelection gpus;  // the GPUs asked for, as the selection was made with
  std::string host;  // what was judged: "this host", or "the host in FILE" for --host FILE
};
[[nodiscard]] Result<JudgedImage> judge_image(const JudgeArguments& arguments, util::Output& output);

// After the answer is on stdout: when nothing fits, `refusal` ("no variant of R runs on this host")
// and every reason on stderr, returning 3; else the explanation when asked for, returning 0.
[[nodiscard]] int finish_judging(const JudgeArguments& arguments, const JudgedImage& judged,
                                 std::string_view refusal);

// Prints the chosen reference (or JSON, or the run arguments and the reference) on stdout and the explanation on stderr; returns 0, or 3
// when no variant fits (every variant's reasons then go to stderr).
[[nodiscard]] Result<int> run_select(const SelectArguments& arguments);

}  // namespace hwimg::commands
