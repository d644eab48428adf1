#pragma once
// The JSON documents of an image: index, manifest and image config, with exact (de)serialisation.
// Serialisation is canonical (sorted keys, no spaces) so equal inputs give equal digests.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/oci/media_types.hpp"

namespace hwimg::oci {

struct Index {
  std::string media_type{"application/vnd.oci.image.index.v1+json"};
  std::vector<Descriptor> manifests;
  Annotations annotations;
};

struct Manifest {
  std::string media_type{"application/vnd.oci.image.manifest.v1+json"};
  std::string artifact_type;  // empty: none; an artifact's kind (image-spec 1.1)
  Descriptor config;
  std::vector<Descriptor> layers;
  std::optional<Descriptor> subject;  // the manifest an artifact refers to (docs/nfd.md#referrers)
  Annotations annotations;
};

struct HistoryEntry {
  std::string created;
  std::string created_by;
  std::string comment;
  bool empty_layer = false;
};

struct ImageConfig {
  std::string architecture;
  std::string os;
  std::string variant;
  std::string created;
  std::string user;
  std::vector<std::string> env;
  std::optional<std::vector<std::string>> entrypoint;
  std::optional<std::vector<std::string>> cmd;
  std::string working_dir;
  std::vector<std::string> exposed_ports;
  std::vector<std::string> volumes;
  std::string stop_signal;
  Annotations labels;
  std::vector<Digest> diff_ids;
  std::vector<HistoryEntry> history;

  // Value of NAME in `env`, if set.
  [[nodiscard]] std::optional<std::string> env_value(std::string_view name) const;
  void set_env(std::string_view name, std::string_view value);
};

[[nodiscard]] std::string to_json(const Index& index);
[[nodiscard]] std::string to_json(const Manifest& manifest);
[[nodiscard]] std::string to_json(const ImageConfig& config);

// Parsers accept Docker schema2 equivalents and ignore unknown fields; errors name the field.
[[nodiscard]] Result<Index> parse_index(std::string_view json);
[[nodiscard]] Result<Manifest> parse_manifest(std::string_view json);
[[nodiscard]] Result<ImageConfig> parse_image_config(std::string_view json);

// The mediaType field of a manifest or index document ("" when absent).
[[nodiscard]] Result<std::string> sniff_media_type(std::string_view json);

}  // namespace hwimg::oci
