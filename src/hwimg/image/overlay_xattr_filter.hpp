#pragma once
// A layer's tar with overlayfs's own bookkeeping taken out: the `trusted.overlay.*` and
// `user.overlay.*` extended attributes (docs/recipe.md#bring-your-dockerfile, "Rootless").
// Rootless buildah on overlay storage (Debian 12's 1.28) copies them from its upper directory into
// the layers it commits, where they mean nothing, make the layer differ from the same build as
// root, and stop runtimes that cannot set user xattrs from unpacking the image.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::image {

// Whether an extended attribute is overlayfs's bookkeeping ("user.overlay.origin").
[[nodiscard]] bool is_overlay_xattr(std::string_view name);

// Streams a tar through to `sink` byte for byte, except for the pax extended-header records that
// carry an overlayfs xattr: those are dropped, and a pax header left empty goes with them. So a
// tar without such records comes out unchanged.
class OverlayXattrFilter {
public:
  using Sink = std::function<Result<void>(std::string_view)>;

  explicit OverlayXattrFilter(Sink sink);

  [[nodiscard]] Result<void> write(std::string_view bytes);
  // Refuses a tar that ends inside an entry.
  [[nodiscard]] Result<void> finish() const;

  // "opt/ (user.overlay.origin)" for each entry it took something from, in tar order.
  [[nodiscard]] const std::vector<std::string>& dropped() const { return m_dropped; }

private:
  enum class State { header, pax, data, trailer };

  [[nodiscard]] Result<void> take_header();
  [[nodiscard]] Result<void> take_pax();

  Sink m_sink;
  State m_state = State::header;
  std::string m_pending;        // the header block, or the pax header block and its records
  std::uint64_t m_needed = 512;  // bytes m_pending must hold before it is looked at
  std::uint64_t m_data_left = 0; // in State::data: entry bytes (with padding) still to pass through
  std::uint64_t m_offset = 0;    // of the block being looked at, for errors
  std::string m_removed;         // the xattrs taken from the pax header of the next entry
  std::string m_pax_path;        // that header's path record, which names the entry
  std::optional<std::uint64_t> m_pax_size;  // and its size record, which the entry's data has
  bool m_after_pax = false;      // a pax header came, its entry not yet
  std::vector<std::string> m_dropped;
};

}  // namespace hwimg::image
