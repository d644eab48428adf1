#pragma once
// The variants `hwimg select` judges, read through an image reader: the index alone for hwimg
// variants, and only for the others their manifest and config; never a layer.

#include <string>
#include <string_view>
#include <vector>

#include "hwimg/image/open_image.hpp"
#include "hwimg/select/candidate.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::select {

struct ImageSource {
  image::OpenedImage image;
  std::vector<Candidate> candidates;

  [[nodiscard]] std::string name() const { return image.reader->name(); }
  [[nodiscard]] const std::string& tag() const { return image.reference.tag; }
};

// The candidates of the index or manifest `root`.
[[nodiscard]] Result<std::vector<Candidate>> read_candidates(image::ImageReader& reader, const oci::Descriptor& root);

[[nodiscard]] Result<ImageSource> load_image_source(std::string_view reference, const image::OpenOptions& options);

// What `docker run` (or skopeo) takes for the chosen variant: "host/repo@sha256:…", or for a layout
// "oci:DIR:TAG-<variant>" (any tag of that manifest in index.json; "oci:DIR@sha256:…" if none).
[[nodiscard]] std::string variant_reference(const ImageSource& source, const Candidate& candidate,
                                            std::string_view variant_id);

}  // namespace hwimg::select
