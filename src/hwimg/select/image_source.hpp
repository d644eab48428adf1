#pragma once
// Where the variants come from: an OCI layout (`oci:DIR[:TAG]`) or a registry reference. Reads the
// index (one GET for a registry) and, only for variants without hwimg annotations, their manifest
// and config; never a layer.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/registry/options.hpp"
#include "hwimg/select/candidate.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::select {

enum class SourceKind { layout, registry };

struct ImageSource {
  SourceKind kind = SourceKind::layout;
  std::string name;      // "oci:DIR" or "host/repo" (Docker's spelling)
  std::string tag;       // the tag the reference named ("" if none)
  oci::Descriptor root;  // the index, or the single manifest
  std::vector<Candidate> candidates;
  std::map<std::string, std::vector<std::string>> layout_tags;  // digest -> tags in index.json
};

[[nodiscard]] Result<ImageSource> load_layout_source(std::string_view reference);
[[nodiscard]] Result<ImageSource> load_registry_source(std::string_view reference,
                                                       const registry::ClientOptions& options);
// A layout for "oci:...", a registry otherwise.
[[nodiscard]] Result<ImageSource> load_image_source(std::string_view reference,
                                                    const registry::ClientOptions& options);

// What `docker run` (or skopeo) takes for the chosen variant: "host/repo@sha256:…", or for a layout
// "oci:DIR:TAG-<variant>" (any tag of that manifest in index.json; "oci:DIR@sha256:…" if none).
[[nodiscard]] std::string variant_reference(const ImageSource& source, const Candidate& candidate,
                                            std::string_view variant_id);

}  // namespace hwimg::select
