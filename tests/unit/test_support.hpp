#pragma once
// What the unit-test files share: a scratch directory, files written into it, tiny images stored in
// a layout or a MemoryReader, and sample strings recorded from real images. The select tests'
// host and candidate builders are in test_select_support.hpp.

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "hwimg/image/memory_reader.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/layout.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::test {

// A fresh directory under the system's temporary directory, removed with what it holds when the
// returned object goes away (at the end of the test case that made it).
inline util::TempDir scratch_directory(std::string_view prefix = "hwimg-unit-") {
  auto directory = util::TempDir::create(std::filesystem::temp_directory_path(), prefix);
  REQUIRE_MESSAGE(directory.has_value(), directory.error().message);
  return std::move(*directory);
}

// Writes `content` to `path` (atomically, as hwimg writes its own files), creating the parents.
inline void write_file(const std::filesystem::path& path, std::string_view content, unsigned mode = 0644) {
  REQUIRE(util::make_directories(path.parent_path()));
  const auto written = util::write_file_atomic(path, content, mode);
  REQUIRE_MESSAGE(written.has_value(), written.error().message);
}

// Stores `bytes` as a blob of `media_type` in a layout or a MemoryReader and returns its descriptor.
inline oci::Descriptor put_blob(const oci::Layout& layout, const std::string& bytes, std::string_view media_type) {
  auto descriptor = layout.put_blob(bytes, media_type);
  REQUIRE_MESSAGE(descriptor.has_value(), descriptor.error().message);
  return std::move(*descriptor);
}
inline oci::Descriptor put_blob(image::MemoryReader& memory, const std::string& bytes, std::string_view media_type) {
  return memory.add(bytes, media_type);
}

// A config (platform, `env`, `labels`) and a manifest pointing at it and at `layers` (which are not
// stored); returns the manifest's descriptor with the platform and `annotations`, as an index
// lists it.
template <typename Store>
oci::Descriptor put_image(Store& store, const oci::Platform& platform, const std::vector<std::string>& env = {},
                          const oci::Annotations& annotations = {}, const oci::Annotations& labels = {},
                          const std::vector<oci::Descriptor>& layers = {}) {
  oci::ImageConfig config;
  config.os = platform.os;
  config.architecture = platform.architecture;
  config.variant = platform.variant;
  config.env = env;
  config.labels = labels;
  for (const auto& layer : layers) config.diff_ids.push_back(layer.digest);
  oci::Manifest manifest;
  manifest.config = put_blob(store, oci::to_json(config), oci::media_type::config);
  manifest.layers = layers;
  auto descriptor = put_blob(store, oci::to_json(manifest), oci::media_type::manifest);
  descriptor.platform = platform;
  descriptor.annotations = annotations;
  return descriptor;
}

// An index listing `manifests`; returns its descriptor.
template <typename Store>
oci::Descriptor put_index(Store& store, std::vector<oci::Descriptor> manifests, oci::Annotations annotations = {}) {
  oci::Index index;
  index.manifests = std::move(manifests);
  index.annotations = std::move(annotations);
  return put_blob(store, oci::to_json(index), oci::media_type::index);
}

// Adds `descriptor` to the layout's index.json under the tag `tag` (without its platform and
// annotations, as hwimg and skopeo write tags).
inline void tag_in_layout(const oci::Layout& layout, oci::Descriptor descriptor, const std::string& tag) {
  descriptor.platform.reset();
  descriptor.annotations = {{std::string(oci::ref_name_annotation), tag}};
  const auto updated = layout.update_index_json([&](oci::Index& index) -> Result<void> {
    index.manifests.push_back(descriptor);
    return {};
  });
  REQUIRE_MESSAGE(updated.has_value(), updated.error().message);
}

// An output that records warnings (and progress lines apart) and drops the rest.
class WarningLog final : public util::Output {
public:
  void progress(std::string_view line) override { progress_lines.emplace_back(line); }
  void status(std::string_view) override {}
  void clear_status() override {}
  void warning(std::string_view line) override { lines.emplace_back(line); }
  void notice(std::string_view line) override { notice_lines.emplace_back(line); }
  void log(std::string_view) override {}
  [[nodiscard]] bool logging() const override { return false; }
  std::vector<std::string> lines;
  std::vector<std::string> progress_lines;
  std::vector<std::string> notice_lines;
};

// NVIDIA_REQUIRE_CUDA of NVIDIA's nvidia/cuda images
// (docs/compatibility.md#nvidia-require-in-nvidia-images).
namespace nvidia {

// nvidia/cuda:11.8.0-base-ubuntu22.04.
inline const std::string require_cuda_11_8 =
    "cuda>=11.8 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471 "
    "brand=nvidia,driver>=470,driver<471 brand=nvidiartx,driver>=470,driver<471 "
    "brand=geforce,driver>=470,driver<471 brand=geforcertx,driver>=470,driver<471 "
    "brand=quadro,driver>=470,driver<471 brand=quadrortx,driver>=470,driver<471 "
    "brand=titan,driver>=470,driver<471 brand=titanrtx,driver>=470,driver<471";

// nvidia/cuda:12.6.3-base-ubuntu22.04: cuda>=12.6, then every brand on the 470, 535 and 550 branches
// (36 alternatives after the first).
inline std::string require_cuda_12_6_3() {
  std::string text = "cuda>=12.6";
  for (const auto* branch : {"470", "535", "550"}) {
    for (const auto* brand : {"unknown", "grid", "tesla", "nvidia", "quadro", "quadrortx", "nvidiartx", "vapps",
                              "vpc", "vcs", "vws", "cloudgaming"}) {
      text += fmt::format(" brand={},driver>={},driver<{}", brand, branch, std::stoi(branch) + 1);
    }
  }
  return text;
}

}  // namespace nvidia

}  // namespace hwimg::test
