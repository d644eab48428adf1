#pragma once
// What the mirror answers for a tag whose upstream document it has: the variant `hwimg select`
// chooses for this node when the document is an hwimg multi-variant index, else the document
// itself, byte for byte (docs/serve.md#tags).

#include <string>
#include <string_view>

#include "hwimg/image/reader.hpp"
#include "hwimg/probe/host_facts.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/select/gpu_selection.hpp"

namespace hwimg::serve {

struct TagAnswer {
  enum class Kind { variant, unchanged, no_match };
  Kind kind = Kind::unchanged;
  std::string bytes;       // variant or unchanged: the manifest (or index) served
  std::string media_type;
  oci::Digest digest;
  std::string variant;     // variant: the chosen id
  std::string reason;      // no_match: why, in one line
  std::string explanation; // variant and no_match: every variant's verdict, as `select --explain`
};

// What the mirror does with a tag of an image hwimg did not build (`serve --foreign`): pass it on
// unchanged (the default), or answer it with what `hwimg select` picks from it: the entry of an
// index whose platform level and config (NVIDIA_REQUIRE_*) fit, a manifest only when it fits.
enum class ForeignImages { pass_through, select };

// True for an index listing at least one manifest with org.hwimg.* annotations.
[[nodiscard]] bool is_hwimg_index(const registry::FetchedManifest& document);

// Judges `document` (what the upstream serves for the tag `image`) for `host`; the variant's own
// manifest is read through `reader`, which must read the same repository.
[[nodiscard]] Result<TagAnswer> answer_tag(const registry::FetchedManifest& document, std::string_view image,
                                           image::ImageReader& reader, const probe::HostFacts& host,
                                           const select::GpuSelection& gpus,
                                           ForeignImages foreign = ForeignImages::pass_through);

}  // namespace hwimg::serve
