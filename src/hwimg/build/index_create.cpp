#include "hwimg/build/index_create.hpp"

#include <algorithm>
#include <map>

#include "hwimg/image/documents.hpp"
#include "hwimg/oci/annotations.hpp"

namespace hwimg::build {
namespace {

namespace key = oci::annotation;

// Annotations the builder also puts on the index: all but the per-variant and base-image ones.
oci::Annotations index_candidates(const oci::Annotations& manifest_annotations) {
  oci::Annotations candidates;
  for (const auto& [name, value] : manifest_annotations) {
    if (!name.starts_with(key::hwimg_prefix) && !name.starts_with(key::base_prefix)) candidates.emplace(name, value);
  }
  return candidates;
}

struct ReadVariant {
  oci::Descriptor descriptor;
  oci::Annotations manifest_annotations;
};

Result<ReadVariant> read_variant(const VariantSource& source) {
  const auto& fetched = source.manifest;
  if (oci::media_type::is_index(fetched.media_type)) {
    return fail("{} is an image index, not a variant manifest (name one variant's tag or digest)", source.reference);
  }
  HWIMG_TRY_ASSIGN(auto manifest, with_context(oci::parse_manifest(fetched.bytes),
                                               "failed to read the manifest of " + source.reference));
  HWIMG_TRY_ASSIGN(const auto config, with_context(oci::parse_image_config(source.config),
                                                   "failed to read the image config of " + source.reference));

  oci::Descriptor descriptor;
  descriptor.media_type = fetched.media_type;
  descriptor.digest = fetched.digest;
  descriptor.size = static_cast<std::int64_t>(fetched.bytes.size());
  descriptor.platform = oci::Platform{config.os, config.architecture, config.variant};
  descriptor.annotations = key::hwimg_pairs(key::variant_pairs_source(manifest.annotations, config.labels));
  if (!descriptor.annotations.contains(std::string(key::variant))) {
    return fail("{} has no {} label: it was not built by hwimg build (or names no variant)", source.reference,
                key::variant);
  }

  return ReadVariant{std::move(descriptor), std::move(manifest.annotations)};
}

}  // namespace

Result<oci::Index> assemble_index(const std::vector<VariantSource>& variants) {
  if (variants.empty()) return fail_usage("failed to create the index: no --from variant");
  oci::Index index;
  std::map<std::string, std::string> seen;  // variant id -> the reference that had it
  for (std::size_t i = 0; i < variants.size(); ++i) {
    HWIMG_TRY_ASSIGN(auto read, with_context(read_variant(variants[i]), "failed to create the index"));
    auto& descriptor = read.descriptor;
    const auto id = descriptor.annotation(key::variant).value_or("");
    if (const auto [it, added] = seen.emplace(id, variants[i].reference); !added) {
      return fail("failed to create the index: variant \"{}\" is in both {} and {}", id, it->second,
                  variants[i].reference);
    }
    // The index keeps what every variant manifest carries alike (one recipe, one epoch).
    if (i == 0) {
      index.annotations = index_candidates(read.manifest_annotations);
    } else {
      std::erase_if(index.annotations, [&](const auto& pair) {
        const auto it = read.manifest_annotations.find(pair.first);
        return it == read.manifest_annotations.end() || it->second != pair.second;
      });
    }
    index.manifests.push_back(std::move(descriptor));
  }
  return index;
}

Result<VariantSource> read_variant_source(image::ImageReader& reader, const std::string& reference,
                                          std::string_view tag_or_digest) {
  const auto context = "failed to read " + reference;
  HWIMG_TRY_ASSIGN(const auto descriptor, with_context(reader.resolve(tag_or_digest), context));
  HWIMG_TRY_ASSIGN(auto bytes, with_context(reader.read(descriptor), context));
  std::string config;
  if (!oci::media_type::is_index(descriptor.media_type)) {
    HWIMG_TRY_ASSIGN(const auto manifest, with_context(oci::parse_manifest(bytes),
                                                       "failed to read the manifest of " + reference));
    HWIMG_TRY_ASSIGN(config, with_context(reader.read(manifest.config), "failed to read the image config of " + reference));
  }
  return VariantSource{reference, {std::move(bytes), descriptor.media_type, descriptor.digest}, std::move(config)};
}

}  // namespace hwimg::build
