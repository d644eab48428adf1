#include "hwimg/select/image_source.hpp"

#include <functional>

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/layout.hpp"
#include "hwimg/registry/client.hpp"

namespace hwimg::select {
namespace {

// Image configs are small; this only guards against a hostile registry.
constexpr std::size_t max_config_size = std::size_t{16} << 20;

using ManifestReader = std::function<Result<std::string>(const oci::Descriptor&)>;
using ConfigReader = std::function<Result<std::string>(const oci::Descriptor&)>;

Result<void> read_configs(std::vector<Candidate>& candidates, const ManifestReader& read_manifest,
                          const ConfigReader& read_config) {
  for (auto& candidate : candidates) {
    if (!needs_config(candidate.descriptor)) {
      continue;
    }
    auto bytes = read_manifest(candidate.descriptor);
    if (!bytes) return std::unexpected(bytes.error());
    auto manifest = oci::parse_manifest(*bytes);
    if (!manifest) return std::unexpected(manifest.error().context("failed to read manifest " + candidate.descriptor.digest.str()));
    // A single-manifest image keeps hwimg's pairs in the manifest's own annotations.
    candidate.descriptor.annotations.insert(manifest->annotations.begin(), manifest->annotations.end());
    auto config_bytes = read_config(manifest->config);
    if (!config_bytes) return std::unexpected(config_bytes.error());
    auto config = oci::parse_image_config(*config_bytes);
    if (!config) return std::unexpected(config.error().context("failed to read image config " + manifest->config.digest.str()));
    candidate.config = ConfigFacts{{config->os, config->architecture, config->variant}, config->env, config->labels};
  }
  return {};
}

// The variants of an index (manifests only: nested indexes and artifacts are not variants), or the
// image itself when the root is a manifest.
Result<std::vector<Candidate>> root_candidates(const oci::Descriptor& root, std::string_view bytes) {
  std::vector<Candidate> candidates;
  if (!oci::media_type::is_index(root.media_type)) {
    candidates.push_back({root, std::nullopt});
    return candidates;
  }
  auto index = oci::parse_index(bytes);
  if (!index) return std::unexpected(index.error().context("failed to read image index " + root.digest.str()));
  for (auto& descriptor : index->manifests) {
    if (oci::media_type::is_manifest(descriptor.media_type)) {
      candidates.push_back({std::move(descriptor), std::nullopt});
    }
  }
  return candidates;
}

}  // namespace

Result<ImageSource> load_layout_source(std::string_view reference) {
  auto parsed = oci::parse_layout_reference(reference);
  if (!parsed) return std::unexpected(parsed.error());
  auto layout = oci::Layout::open(parsed->directory);
  if (!layout) return std::unexpected(layout.error());
  auto index_json = layout->read_index_json();
  if (!index_json) return std::unexpected(index_json.error());

  ImageSource source;
  source.kind = SourceKind::layout;
  source.name = "oci:" + parsed->directory.string();
  source.tag = parsed->tag;
  for (const auto& descriptor : index_json->manifests) {
    if (const auto name = descriptor.ref_name()) {
      source.layout_tags[descriptor.digest.str()].push_back(*name);
    }
  }
  auto root = layout->resolve(parsed->tag);
  if (!root) return std::unexpected(root.error());
  source.root = *root;
  std::string root_bytes;
  if (oci::media_type::is_index(root->media_type)) {
    auto bytes = layout->read_blob(*root);
    if (!bytes) return std::unexpected(bytes.error());
    root_bytes = std::move(*bytes);
  }
  auto candidates = root_candidates(*root, root_bytes);
  if (!candidates) return std::unexpected(candidates.error());
  const auto read = [&](const oci::Descriptor& d) { return layout->read_blob(d); };
  if (auto done = read_configs(*candidates, read, read); !done) return std::unexpected(done.error());
  source.candidates = std::move(*candidates);
  return source;
}

Result<ImageSource> load_registry_source(std::string_view reference, const registry::ClientOptions& options) {
  auto parsed = registry::parse_reference(reference);
  if (!parsed) return std::unexpected(parsed.error());
  auto client = registry::Client::create(options);
  if (!client) return std::unexpected(client.error());
  auto fetched = client->get_manifest(*parsed);
  if (!fetched) return std::unexpected(fetched.error());

  ImageSource source;
  source.kind = SourceKind::registry;
  source.name = parsed->name();
  source.tag = parsed->tag;
  source.root.media_type = fetched->media_type;
  source.root.digest = fetched->digest;
  source.root.size = static_cast<std::int64_t>(fetched->bytes.size());
  auto candidates = root_candidates(source.root, fetched->bytes);
  if (!candidates) return std::unexpected(candidates.error());
  const auto read_manifest = [&](const oci::Descriptor& d) -> Result<std::string> {
    if (d.digest == source.root.digest) {
      return fetched->bytes;
    }
    auto variant = parsed->with_tag("");
    variant.digest = d.digest;
    auto manifest = client->get_manifest(variant);
    if (!manifest) return std::unexpected(manifest.error());
    return std::move(manifest->bytes);
  };
  const auto read_config = [&](const oci::Descriptor& d) { return client->get_blob(*parsed, d.digest, max_config_size); };
  if (auto done = read_configs(*candidates, read_manifest, read_config); !done) return std::unexpected(done.error());
  source.candidates = std::move(*candidates);
  return source;
}

Result<ImageSource> load_image_source(std::string_view reference, const registry::ClientOptions& options) {
  if (oci::is_layout_reference(reference)) {
    return load_layout_source(reference);
  }
  return load_registry_source(reference, options);
}

std::string variant_reference(const ImageSource& source, const Candidate& candidate, std::string_view variant_id) {
  const auto digest = candidate.descriptor.digest.str();
  if (source.kind == SourceKind::registry) {
    return source.name + "@" + digest;
  }
  const auto tags = source.layout_tags.find(digest);
  if (tags == source.layout_tags.end() || tags->second.empty()) {
    return source.name + "@" + digest;
  }
  const auto preferred = source.tag + "-" + std::string(variant_id);
  for (const auto& tag : tags->second) {
    if (tag == preferred) {
      return source.name + ":" + tag;
    }
  }
  return source.name + ":" + tags->second.front();
}

}  // namespace hwimg::select
