#pragma once
// Layer needs kept by layer digest in the user's cache (docs/cache.md), so an image's layers are
// scanned once however many variants, builds and `inspect --verify` runs read them:
// `<cache>/code-needs/sha256/<hex>.json`, written atomically. A file from an older scanner, or one
// that does not read as a layer's needs, counts as missing and is replaced.

#include <filesystem>
#include <optional>

#include "hwimg/oci/digest.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/verify/code_needs.hpp"

namespace hwimg::verify {

class NeedsCache {
public:
  explicit NeedsCache(std::filesystem::path cache_root) : m_root(std::move(cache_root)) {}

  [[nodiscard]] std::optional<LayerNeeds> load(const oci::Digest& layer) const;
  // Best effort: a cache that cannot be written (a full disk) only means scanning again next time.
  void store(const oci::Digest& layer, const LayerNeeds& needs) const;
  [[nodiscard]] std::filesystem::path path(const oci::Digest& layer) const;

private:
  std::filesystem::path m_root;
};

// The JSON form, and back; nullopt for anything that is not what needs_to_json writes.
[[nodiscard]] std::string needs_to_json(const LayerNeeds& needs);
[[nodiscard]] std::optional<LayerNeeds> needs_from_json(std::string_view text);

}  // namespace hwimg::verify
