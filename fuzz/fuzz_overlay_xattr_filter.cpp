// Layer tars as buildah hands them over, through the filter that takes overlayfs's xattrs out, in
// pieces of every size: no crash, and a tar it took nothing out of comes out byte for byte.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hwimg/image/overlay_xattr_filter.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 64 * 17;
  const std::string_view tar(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string out;
  hwimg::image::OverlayXattrFilter filter([&](std::string_view bytes) -> hwimg::Result<void> {
    out.append(bytes);
    return {};
  });
  for (std::size_t at = 0; at < tar.size(); at += piece) {
    if (!filter.write(tar.substr(at, piece))) return 0;
  }
  if (!filter.finish()) return 0;
  if (filter.dropped().empty() && out != tar) __builtin_trap();
  return 0;
}
