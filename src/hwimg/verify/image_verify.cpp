#include "hwimg/verify/image_verify.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "hwimg/hw/elf_machine.hpp"
#include "hwimg/image/documents.hpp"
#include "hwimg/select/candidate.hpp"
#include "hwimg/select/image_source.hpp"
#include "hwimg/verify/layer_needs.hpp"

namespace hwimg::verify {
namespace {

// What the variant promises: its org.hwimg.* CPU pairs, else its platform.
CpuLabel label_of(const select::Requirements& requirements) {
  CpuLabel label;
  label.architecture = requirements.platform ? requirements.platform->architecture : "";
  label.allowed = requirements.required_cpu_features();
  if (label.architecture == "amd64") {
    label.level = requirements.x86_level.value_or(hw::X86Level::v1);
    if (requirements.cpu_target != nullptr) label.level = std::max(label.level, requirements.cpu_target->level);
    label.allowed.merge(hw::x86_level_features(label.level));
  }
  if (requirements.cpu_target != nullptr) {
    label.name = requirements.cpu_target->name;
  } else if (requirements.cpu_level_target != nullptr) {
    label.name = requirements.cpu_level_target->name;
  } else if (requirements.annotated && requirements.x86_level) {
    label.name = hw::x86_level_name(*requirements.x86_level);
  } else {
    label.name = requirements.platform ? requirements.platform->str() : "no platform";
  }
  if (!requirements.cpu_features.empty()) {
    label.name += " +" + fmt::format("{}", fmt::join(requirements.cpu_features, ","));
  }
  return label;
}

std::optional<std::string> why_skipped(const select::Requirements& requirements, const oci::Manifest& manifest) {
  if (!manifest.artifact_type.empty()) return fmt::format("an artifact ({})", manifest.artifact_type);
  if (!requirements.platform || requirements.platform->architecture == "unknown") {
    return std::string("no platform (an attestation or other non-image manifest)");
  }
  if (!hw::elf_machine_of(requirements.platform->architecture)) {
    return fmt::format("architecture {} is not one hwimg checks", requirements.platform->architecture);
  }
  return std::nullopt;
}

class LayerReader {
public:
  explicit LayerReader(const VerifyOptions& options) : m_options(options), m_pool(util::default_parallelism()) {}

  // The needs of `layer`, and whether they were scanned now (not kept from before).
  Result<std::pair<const LayerNeeds*, bool>> needs(const oci::Descriptor& layer) {
    if (const auto found = m_read.find(layer.digest); found != m_read.end()) return std::pair{&found->second, false};
    if (m_options.cache != nullptr) {
      if (auto kept = m_options.cache->load(layer.digest)) {
        return std::pair{&m_read.emplace(layer.digest, std::move(*kept)).first->second, false};
      }
    }
    if (m_options.output != nullptr) m_options.output->progress(fmt::format("scanning layer {}", layer.digest.str()));
    HWIMG_TRY_ASSIGN(const auto blob, m_options.blobs(layer));
    HWIMG_TRY_ASSIGN(auto scanned, blob_needs(blob, layer.digest, m_options.cache, m_pool));
    return std::pair{&m_read.emplace(layer.digest, std::move(scanned)).first->second, true};
  }

private:
  const VerifyOptions& m_options;
  util::ThreadPool m_pool;
  std::map<oci::Digest, LayerNeeds> m_read;
};

}  // namespace

LevelNeeds level_needs(const hw::FeatureSet& features) {
  LevelNeeds needs;
  const auto top = hw::x86_level_features(hw::X86Level::v4);
  for (const auto level : {hw::X86Level::v1, hw::X86Level::v2, hw::X86Level::v3, hw::X86Level::v4}) {
    const auto has = hw::x86_level_features(level);
    needs.level = level;
    if (std::ranges::all_of(features, [&](const std::string& f) { return has.contains(f) || !top.contains(f); })) break;
  }
  for (const auto& feature : features) {
    if (!top.contains(feature)) needs.beyond_levels.push_back(feature);
  }
  return needs;
}

namespace {

Result<void> judge_layers(const oci::Manifest& manifest, LayerReader& layers, VariantVerification& variant) {
  variant.layers = manifest.layers.size();
  for (const auto& layer : manifest.layers) {
    HWIMG_TRY_ASSIGN(const auto needs,
                     with_context(layers.needs(layer), fmt::format("failed to verify variant {}", variant.name)));
    if (needs.second) ++variant.layers_scanned;
    judge_layer(*needs.first, variant.label, fmt::format("layer {}", layer.digest.str()), variant.findings);
  }
  return {};
}

}  // namespace

Result<std::vector<VariantVerification>> verify_image(image::ImageReader& reader, const oci::Descriptor& root,
                                                      const VerifyOptions& options) {
  HWIMG_TRY_ASSIGN(const auto candidates, select::read_candidates(reader, root));
  LayerReader layers(options);
  std::vector<VariantVerification> out;
  for (const auto& candidate : candidates) {
    const auto requirements = select::requirements_of(candidate);
    HWIMG_TRY_ASSIGN(const auto manifest, image::read_manifest(reader, candidate.descriptor));
    VariantVerification variant;
    variant.name = requirements.name;
    variant.platform = requirements.platform ? requirements.platform->str() : "";
    variant.manifest = candidate.descriptor.digest;
    variant.skipped = why_skipped(requirements, manifest);
    if (!variant.skipped) {
      variant.label = label_of(requirements);
      HWIMG_TRY(judge_layers(manifest, layers, variant));
    }
    out.push_back(std::move(variant));
  }
  return out;
}

Result<VariantVerification> verify_manifest(image::ImageReader& reader, const oci::Descriptor& descriptor,
                                            std::string name, const CpuLabel& label, const VerifyOptions& options) {
  HWIMG_TRY_ASSIGN(const auto manifest, image::read_manifest(reader, descriptor));
  LayerReader layers(options);
  VariantVerification variant;
  variant.name = std::move(name);
  variant.platform = descriptor.platform ? descriptor.platform->str() : "";
  variant.manifest = descriptor.digest;
  variant.label = label;
  HWIMG_TRY(judge_layers(manifest, layers, variant));
  return variant;
}

}  // namespace hwimg::verify
