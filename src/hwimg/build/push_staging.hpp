#pragma once
// Where `hwimg build RECIPE --push REF` without -o writes its layout (docs/cache.md): a staging
// layout in the user's cache, one per recipe file, whatever it is pushed to. A rebuild of the same
// recipe, to this repository or another, finds its variants there unchanged (the build cache in
// the layout) and builds nothing again. One build of a recipe uses its staging layout at a time;
// the next one waits, saying so.

#include <filesystem>

#include "hwimg/image/cache_lease.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/output.hpp"

namespace hwimg::build {

class PushStaging {
public:
  // The staging layout of `recipe` (made when missing, recording which recipe it is for), pinned
  // in `lease` and held until the object goes away.
  [[nodiscard]] static Result<PushStaging> open(image::CacheLease& lease, const std::filesystem::path& recipe,
                                                util::Output& output);

  [[nodiscard]] const std::filesystem::path& layout() const { return m_layout; }

  // After a build of `tag`: drops what that build does not use (other tags, the blobs only they
  // used, build cache entries naming them) and marks the layout used now. Every build of the
  // recipe reuses its staging layout, which would otherwise keep each change's variants for good.
  [[nodiscard]] Result<void> keep_only(const std::string& tag) const;

private:
  PushStaging(std::filesystem::path layout, util::FileLock lock) : m_layout(std::move(layout)), m_lock(std::move(lock)) {}

  std::filesystem::path m_layout;
  util::FileLock m_lock;
};

}  // namespace hwimg::build
