#pragma once
// `hwimg select REF`: the one variant of REF that runs on this host (docs/selection.md).

#include <filesystem>
#include <optional>
#include <string>

#include "hwimg/commands/registry_flags.hpp"
#include "hwimg/select/image_source.hpp"
#include "hwimg/select/selector.hpp"

namespace hwimg::commands {

enum class SelectFormat { reference, json };
enum class Explain { no, yes };

struct SelectArguments {
  std::string reference;                            // oci:DIR[:TAG] or a registry reference
  std::optional<std::filesystem::path> host_file;  // facts instead of a live probe
  std::optional<std::string> gpus;                  // --gpus; absent: NVIDIA_VISIBLE_DEVICES, else all
  SelectFormat format = SelectFormat::reference;
  Explain explain = Explain::no;
  RegistryFlags registry;
};

// REF's variants judged against this host (or the facts file) and the GPUs the container gets
// (`gpus`, else NVIDIA_VISIBLE_DEVICES): what `select` and `check` report.
struct JudgedImage {
  select::ImageSource source;
  select::Selection selection;
};
[[nodiscard]] Result<JudgedImage> judge_image(const std::string& reference,
                                              const std::optional<std::filesystem::path>& host_file,
                                              const std::optional<std::string>& gpus, const RegistryFlags& registry,
                                              util::Output& output);

// Prints the chosen reference (or JSON) on stdout and the explanation on stderr; returns 0, or 3
// when no variant fits (every variant's reasons then go to stderr).
[[nodiscard]] Result<int> run_select(const SelectArguments& arguments);

}  // namespace hwimg::commands
