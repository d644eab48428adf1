#pragma once
// `inspect --verify` (docs/commands.md#hwimg-inspect, docs/recipe.md#cpu-code): every variant of an image made by anyone, from a
// layout or a registry, its programs scanned layer by layer and held against what the variant is
// labelled — org.hwimg.cpu.* when it has them, else its platform (linux/amd64/v3 promises
// x86-64-v3; linux/amd64 the baseline). Layers are read once per digest, their needs kept in the
// user's cache, so a second run fetches and scans nothing.

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hwimg/image/reader.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/output.hpp"
#include "hwimg/util/thread_pool.hpp"
#include "hwimg/verify/judge.hpp"
#include "hwimg/verify/needs_cache.hpp"

namespace hwimg::verify {

struct VariantVerification {
  std::string name;      // the variant id, else its platform
  std::string platform;  // "linux/amd64/v3"
  oci::Digest manifest;
  std::optional<std::string> skipped;  // why it was not verified (an attestation, an unknown architecture)
  CpuLabel label;
  Findings findings;
  std::size_t layers = 0;
  std::size_t layers_scanned = 0;  // the others' needs were kept from an earlier run

  [[nodiscard]] bool covered() const { return !skipped && findings.uncovered.empty(); }
};

// Where the layer blobs come from: a layout's own files, or the user's blob cache for a registry.
using BlobSource = std::function<Result<std::filesystem::path>(const oci::Descriptor& layer)>;

struct VerifyOptions {
  BlobSource blobs;
  const NeedsCache* cache = nullptr;  // none: every layer is scanned
  util::Output* output = nullptr;     // a progress line per layer scanned
};

[[nodiscard]] Result<std::vector<VariantVerification>> verify_image(image::ImageReader& reader,
                                                                    const oci::Descriptor& root,
                                                                    const VerifyOptions& options);

// One image manifest's programs held against `label` instead of what it is labelled: `check
// --verify` holds the variant it would run against this host's CPU.
[[nodiscard]] Result<VariantVerification> verify_manifest(image::ImageReader& reader, const oci::Descriptor& manifest,
                                                          std::string name, const CpuLabel& label,
                                                          const VerifyOptions& options);

// The lowest x86-64 level whose features hold every level feature of `features`, and the features
// of `features` no level has (aes, vaes, ...).
struct LevelNeeds {
  hw::X86Level level = hw::X86Level::v1;
  std::vector<std::string> beyond_levels;
};
[[nodiscard]] LevelNeeds level_needs(const hw::FeatureSet& features);

}  // namespace hwimg::verify
