#include "hwimg/image/layer_entry.hpp"

#include "hwimg/util/strings.hpp"

namespace hwimg::image {

Result<std::string> clean_entry_path(std::string_view raw) {
  std::string cleaned;
  for (const auto& part : util::split(raw, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return fail("entry \"{}\" leaves the image root", raw);
    if (!cleaned.empty()) cleaned += '/';
    cleaned += part;
  }
  return cleaned;
}

}  // namespace hwimg::image
