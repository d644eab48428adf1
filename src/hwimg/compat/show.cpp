#include "hwimg/compat/show.hpp"

#include <nlohmann/json.hpp>

#include "hwimg/compat/nfd_spec.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/referrers.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::compat {
namespace {

// A spec is a few KiB; this bounds what a hostile registry can make us hold.
constexpr std::size_t max_spec_size = std::size_t{1} << 20;

std::string variant_id(const oci::Descriptor& d) {
  return d.annotation(oci::annotation::variant).value_or(d.digest.str());
}

Result<FoundArtifact> find_one(image::ImageReader& reader, const oci::Descriptor& subject) {
  FoundArtifact out{variant_id(subject), subject, {}, {}};
  const auto what = fmt::format("find the NFD artifact of variant {} ({})", out.variant, subject.digest.str());
  HWIMG_TRY_ASSIGN(const auto referrers, with_context(reader.referrers({subject.digest}), "failed to " + what));
  std::optional<oci::Manifest> found;
  for (const auto& bytes : referrers) {
    auto manifest = oci::parse_manifest(bytes);
    if (!manifest) continue;
    auto descriptor = registry::referrer_descriptor(bytes, *manifest);
    if (descriptor.artifact_type != nfd_artifact_type) continue;
    out.artifact = std::move(descriptor);
    found = std::move(*manifest);
  }
  if (!found) {
    return fail("failed to {}: it has none (hwimg push attaches them unless --no-compat)", what);
  }
  if (found->layers.empty() || found->layers.front().media_type != nfd_spec_media_type) {
    return fail("failed to {}: artifact {} has no {} layer", what, out.artifact.digest.str(), nfd_spec_media_type);
  }
  const auto& layer = found->layers.front();
  if (layer.size < 0 || static_cast<std::size_t>(layer.size) > max_spec_size) {
    return fail("failed to {}: its spec is {} bytes, more than the {} a spec may have", what, layer.size, max_spec_size);
  }
  HWIMG_TRY_ASSIGN(out.yaml, with_context(reader.read(layer), "failed to " + what));
  return out;
}

}  // namespace

Result<std::vector<FoundArtifact>> find_artifacts(image::ImageReader& reader, const oci::Descriptor& root,
                                                  const std::string& name, const std::optional<std::string>& variant) {
  HWIMG_TRY_ASSIGN(const auto bytes, reader.read(root));
  std::vector<oci::Descriptor> subjects;
  if (oci::media_type::is_index(root.media_type)) {
    HWIMG_TRY_ASSIGN(const auto index, oci::parse_index(bytes));
    for (const auto& d : index.manifests) {
      if (oci::media_type::is_manifest(d.media_type) && (!variant || variant_id(d) == *variant)) subjects.push_back(d);
    }
    if (variant && subjects.empty()) {
      std::vector<std::string> ids;
      for (const auto& d : index.manifests) ids.push_back(variant_id(d));
      return fail_usage("failed to show the NFD artifacts of {}: no variant \"{}\"{} (it has {})", name, *variant,
                        util::did_you_mean(*variant, ids), util::join(ids, ", "));
    }
  } else {
    HWIMG_TRY_ASSIGN(const auto manifest, oci::parse_manifest(bytes));
    auto self = root;
    self.annotations = manifest.annotations;
    if (variant && variant_id(self) != *variant) {
      return fail_usage("failed to show the NFD artifacts of {}: it is the single variant {}, not \"{}\"", name,
                        variant_id(self), *variant);
    }
    subjects.push_back(std::move(self));
  }
  std::vector<FoundArtifact> out;
  for (const auto& subject : subjects) {
    HWIMG_TRY_ASSIGN(out.emplace_back(), find_one(reader, subject));
  }
  return out;
}

std::string artifacts_json(const std::vector<FoundArtifact>& artifacts) {
  auto out = nlohmann::json::array();
  for (const auto& a : artifacts) {
    out.push_back({{"variant", a.variant},
                   {"subject", a.subject.digest.str()},
                   {"artifact", a.artifact.digest.str()},
                   {"yaml", a.yaml}});
  }
  return out.dump(2) + "\n";
}

std::string artifacts_yaml(const std::vector<FoundArtifact>& artifacts) {
  if (artifacts.size() == 1) return artifacts.front().yaml;
  std::string out;
  for (const auto& a : artifacts) {
    out += fmt::format("--- # variant {} ({}), artifact {}\n", a.variant, a.subject.digest.str(), a.artifact.digest.str());
    out += a.yaml;
  }
  return out;
}

}  // namespace hwimg::compat
