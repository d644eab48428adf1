#pragma once
// `hwimg select REF`: the one variant of REF that runs on this host (docs/selection.md).

#include <filesystem>
#include <optional>
#include <string>

#include "hwimg/registry/options.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::select {

enum class OutputFormat { reference, json };
enum class Explain { no, yes };

struct SelectOptions {
  std::string reference;                      // oci:DIR[:TAG] or a registry reference
  std::optional<std::filesystem::path> host_file;  // facts instead of a live probe
  std::optional<std::string> gpus;            // --gpus; absent: NVIDIA_VISIBLE_DEVICES, else all
  OutputFormat format = OutputFormat::reference;
  Explain explain = Explain::no;
  registry::ClientOptions registry;
};

// Prints the chosen reference (or JSON) on stdout and the explanation on stderr; returns 0, or 3
// when no variant fits (every variant's reasons then go to stderr).
[[nodiscard]] Result<int> run_select(const SelectOptions& options);

}  // namespace hwimg::select
