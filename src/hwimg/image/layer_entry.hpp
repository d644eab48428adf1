#pragma once
// Names of layer tar entries, read the one way for every reader of layers (the unpacker of builder
// images and the device-code check's file reader): relative to the image root, never out of it.

#include <string>
#include <string_view>

#include "hwimg/util/error.hpp"

namespace hwimg::image {

// "./usr//bin/" -> "usr/bin", "./" -> "" (the root itself), and "/bin" -> "bin": a leading "/" is
// relative to the image root, as Docker and containerd read it. A ".." component is refused,
// naming the entry: "entry \"../x\" leaves the image root".
[[nodiscard]] Result<std::string> clean_entry_path(std::string_view raw);

}  // namespace hwimg::image
