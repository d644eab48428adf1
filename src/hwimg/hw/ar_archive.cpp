#include "hwimg/hw/ar_archive.hpp"

#include <charconv>
#include <optional>

namespace hwimg::hw {

namespace {

constexpr std::string_view ar_magic = "!<arch>\n";
constexpr std::uint64_t ar_header_size = 60;

std::string_view ar_text(std::span<const std::byte> bytes, std::uint64_t offset, std::uint64_t size) {
  return {reinterpret_cast<const char*>(bytes.data() + offset), size};
}

std::string_view trim_spaces(std::string_view field) {
  while (!field.empty() && field.back() == ' ') {
    field.remove_suffix(1);
  }
  return field;
}

// BSD names are padded with NULs.
std::string_view until_nul(std::string_view field) {
  return field.substr(0, field.find('\0'));
}

// A decimal header field ("1234      "); nullopt when it is not one.
std::optional<std::uint64_t> ar_decimal(std::string_view field) {
  field = trim_spaces(field);
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || error != std::errc() || end != field.data() + field.size()) {
    return std::nullopt;
  }
  return value;
}

// A GNU long name: the entry at `offset` of the `//` member, which ends each with "/\n".
Result<std::string> long_name(std::string_view table, std::string_view field, std::string_view name,
                              std::uint64_t where) {
  const auto offset = ar_decimal(field.substr(1));
  if (!offset || *offset >= table.size()) {
    return fail("failed to read archive {}: member at offset {} names long name '{}' outside the name table", name,
                where, field);
  }
  auto entry = table.substr(*offset);
  entry = entry.substr(0, entry.find('\n'));
  if (entry.ends_with('/')) {
    entry.remove_suffix(1);
  }
  return std::string(entry);
}

}  // namespace

bool is_ar_archive(std::span<const std::byte> bytes) {
  return bytes.size() >= ar_magic.size() && ar_text(bytes, 0, ar_magic.size()) == ar_magic;
}

Result<std::vector<ArchiveMember>> read_ar_members(std::span<const std::byte> bytes, std::string_view name) {
  if (!is_ar_archive(bytes)) {
    return fail("failed to read archive {}: no \"!<arch>\" magic", name);
  }
  std::vector<ArchiveMember> members;
  std::string_view long_names;
  for (std::uint64_t at = ar_magic.size(); at < bytes.size();) {
    if (bytes.size() - at < ar_header_size || ar_text(bytes, at + 58, 2) != "`\n") {
      return fail("failed to read archive {}: no member header at offset {}", name, at);
    }
    const auto size = ar_decimal(ar_text(bytes, at + 48, 10));
    if (!size || *size > bytes.size() - at - ar_header_size) {
      return fail("failed to read archive {}: member at offset {} has size '{}', beyond the end of the file", name,
                  at, trim_spaces(ar_text(bytes, at + 48, 10)));
    }
    const auto field = trim_spaces(ar_text(bytes, at, 16));
    ArchiveMember member{{}, at + ar_header_size, bytes.subspan(at + ar_header_size, *size)};
    if (field == "//") {
      long_names = ar_text(bytes, member.offset, *size);
    } else if (field.starts_with("#1/")) {
      const auto length = ar_decimal(field.substr(3));
      if (!length || *length > *size) {
        return fail("failed to read archive {}: member at offset {} has a BSD name longer than itself", name, at);
      }
      member.name = std::string(until_nul(ar_text(bytes, member.offset, *length)));
      member.offset += *length;
      member.data = member.data.subspan(*length);
    } else if (field.starts_with('/') && field.size() > 1 && field != "/SYM64/") {
      HWIMG_TRY_ASSIGN(member.name, long_name(long_names, field, name, at));
    } else if (field != "/" && field != "/SYM64/" && !field.starts_with("__.SYMDEF")) {
      member.name = std::string(field.ends_with('/') ? field.substr(0, field.size() - 1) : field);
    }
    if (!member.name.empty()) {
      members.push_back(std::move(member));
    }
    at += ar_header_size + *size + (*size % 2);
  }
  return members;
}

}  // namespace hwimg::hw
