#pragma once
// The members of a Unix `ar` archive (a static library, `.a`): the device code of a static CUDA
// library is in its object members (docs/compatibility.md#device-code-files).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::hw {

struct ArchiveMember {
  std::string name;                 // "kernels.o"
  std::uint64_t offset = 0;         // of its data in the archive
  std::span<const std::byte> data;  // a view into the archive's bytes
};

// True when the bytes start with "!<arch>\n" (thin archives, which hold no members' bytes, do not).
[[nodiscard]] bool is_ar_archive(std::span<const std::byte> bytes);

// Every file member, in order; symbol tables and the long-name table are skipped, GNU (`/123`) and
// BSD (`#1/20`) long names resolved. `name` names the archive in errors, which give the offset.
[[nodiscard]] Result<std::vector<ArchiveMember>> read_ar_members(std::span<const std::byte> bytes,
                                                                 std::string_view name);

}  // namespace hwimg::hw
