#include "hwimg/registry/index_create.hpp"

#include <algorithm>
#include <map>

namespace hwimg::registry {
namespace {

constexpr std::string_view hwimg_prefix = "org.hwimg.";
constexpr std::string_view variant_key = "org.hwimg.variant";
constexpr std::string_view base_prefix = "org.opencontainers.image.base.";
// An image config is small; this bounds what a hostile registry can make us hold.
constexpr std::size_t max_config_size = std::size_t{4} << 20;

oci::Annotations hwimg_pairs(const oci::Annotations& from) {
  oci::Annotations pairs;
  for (const auto& [key, value] : from) {
    if (key.starts_with(hwimg_prefix)) pairs.emplace(key, value);
  }
  return pairs;
}

// The builder annotates each manifest with exactly its org.hwimg.* pairs; an image built by other
// tools may carry them only as config labels (a Dockerfile LABEL), which are then used instead.
oci::Annotations variant_pairs(const oci::Manifest& manifest, const oci::ImageConfig& config) {
  if (manifest.annotations.contains(std::string(variant_key))) return hwimg_pairs(manifest.annotations);
  return hwimg_pairs(config.labels);
}

// Annotations the builder also puts on the index: all but the per-variant and base-image ones.
oci::Annotations index_candidates(const oci::Annotations& manifest_annotations) {
  oci::Annotations candidates;
  for (const auto& [key, value] : manifest_annotations) {
    if (!key.starts_with(hwimg_prefix) && !key.starts_with(base_prefix)) candidates.emplace(key, value);
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
  auto manifest = oci::parse_manifest(fetched.bytes);
  if (!manifest) return std::unexpected(manifest.error().context("failed to read the manifest of " + source.reference));
  auto config = oci::parse_image_config(source.config);
  if (!config) return std::unexpected(config.error().context("failed to read the image config of " + source.reference));

  oci::Descriptor descriptor;
  descriptor.media_type = fetched.media_type;
  descriptor.digest = fetched.digest;
  descriptor.size = static_cast<std::int64_t>(fetched.bytes.size());
  descriptor.platform = oci::Platform{config->os, config->architecture, config->variant};
  descriptor.annotations = variant_pairs(*manifest, *config);
  if (!descriptor.annotations.contains(std::string(variant_key))) {
    return fail("{} has no {} label: it was not built by hwimg build (or names no variant)", source.reference,
                variant_key);
  }

  return ReadVariant{std::move(descriptor), std::move(manifest->annotations)};
}

Result<void> check_same_repository(const Reference& destination, const Reference& source) {
  if (source.registry != destination.registry || source.repository != destination.repository) {
    return fail_usage("--from {} is in {}, not in {}: a registry accepts an index only when its variants are in "
                      "the same repository; push the variant there first",
                      source.str(), source.name(), destination.name());
  }
  return {};
}

}  // namespace

Result<oci::Index> assemble_index(const std::vector<VariantSource>& variants) {
  if (variants.empty()) return fail_usage("failed to create the index: no --from variant");
  oci::Index index;
  std::map<std::string, std::string> seen;  // variant id -> the reference that had it
  for (std::size_t i = 0; i < variants.size(); ++i) {
    auto read = read_variant(variants[i]);
    if (!read) return std::unexpected(read.error().context("failed to create the index"));
    auto& descriptor = read->descriptor;
    const auto id = descriptor.annotation(variant_key).value_or("");
    if (const auto [it, added] = seen.emplace(id, variants[i].reference); !added) {
      return fail("failed to create the index: variant \"{}\" is in both {} and {}", id, it->second,
                  variants[i].reference);
    }
    // The index keeps what every variant manifest carries alike (one recipe, one epoch).
    if (i == 0) {
      index.annotations = index_candidates(read->manifest_annotations);
    } else {
      std::erase_if(index.annotations, [&](const auto& pair) {
        const auto it = read->manifest_annotations.find(pair.first);
        return it == read->manifest_annotations.end() || it->second != pair.second;
      });
    }
    index.manifests.push_back(std::move(descriptor));
  }
  return index;
}

Result<oci::Digest> create_index(Client& client, const Reference& destination, const std::vector<Reference>& sources) {
  for (const auto& source : sources) HWIMG_TRY(check_same_repository(destination, source));
  std::vector<VariantSource> variants;
  for (const auto& source : sources) {
    auto fetched = client.get_manifest(source);
    if (!fetched) return std::unexpected(fetched.error().context("failed to read " + source.str()));
    std::string config;
    if (!oci::media_type::is_index(fetched->media_type)) {
      auto manifest = oci::parse_manifest(fetched->bytes);
      if (!manifest) return std::unexpected(manifest.error().context("failed to read the manifest of " + source.str()));
      auto bytes = client.get_blob(source, manifest->config.digest, max_config_size);
      if (!bytes) return std::unexpected(bytes.error().context("failed to read the image config of " + source.str()));
      config = std::move(*bytes);
    }
    variants.push_back({source.str(), std::move(*fetched), std::move(config)});
  }
  auto index = assemble_index(variants);
  if (!index) return std::unexpected(index.error());
  auto digest = client.put_manifest(destination, oci::to_json(*index), oci::media_type::index);
  if (!digest) return std::unexpected(digest.error().context("failed to push the index " + destination.str()));
  return *digest;
}

Result<int> index_create_command(const std::string& destination, const std::vector<std::string>& sources,
                                 const ClientOptions& options) {
  auto target = parse_reference(destination);
  if (!target) return std::unexpected(Error{target.error().message, ExitCode::usage});
  if (target->digest || target->tag.empty()) {
    return fail_usage("failed to create the index {}: name it by tag, REGISTRY/REPO:TAG", destination);
  }
  std::vector<Reference> references;
  for (const auto& text : sources) {
    auto reference = parse_reference(text);
    if (!reference) return std::unexpected(Error{reference.error().message, ExitCode::usage});
    references.push_back(std::move(*reference));
  }
  if (references.empty()) return fail_usage("failed to create the index {}: no --from variant", destination);
  auto client = Client::create(options);
  if (!client) return std::unexpected(client.error());
  auto digest = create_index(*client, *target, references);
  if (!digest) return std::unexpected(digest.error());
  fmt::print("{}@{}\n", target->str(), digest->str());
  return 0;
}

}  // namespace hwimg::registry
