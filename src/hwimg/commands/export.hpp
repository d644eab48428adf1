#pragma once
// `hwimg export REF --format oci-archive|docker-archive -o FILE`: one variant (or a single-manifest
// image) as a tar that docker load, podman load, skopeo and Apptainer read.

#include <filesystem>
#include <optional>
#include <string>

#include "hwimg/commands/registry_flags.hpp"
#include "hwimg/image/archive_export.hpp"

namespace hwimg::commands {

struct ExportArguments {
  std::string reference;  // a registry reference or oci:DIR[:TAG]
  image::ArchiveFormat format = image::ArchiveFormat::oci;
  std::filesystem::path output;
  std::optional<std::string> variant;               // --variant ID
  std::optional<std::filesystem::path> facts_file;  // --for: the variant `select --host` picks
  std::optional<std::string> repo_tag;              // --tag NAME:TAG; else the source's name and tag
  RegistryFlags registry;
};

// Prints "exported REF variant ID (DIGEST) to FILE as FORMAT: ..."; 3 when --for finds no variant
// for that host (every variant's reasons on stderr).
[[nodiscard]] Result<int> run_export(const ExportArguments& arguments);

}  // namespace hwimg::commands
