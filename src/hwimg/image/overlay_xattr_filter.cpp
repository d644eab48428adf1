#include "hwimg/image/overlay_xattr_filter.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "hwimg/util/strings.hpp"

namespace hwimg::image {

namespace {

constexpr std::uint64_t block_size = 512;
// Linux caps a file's xattrs at 64 KiB (XATTR_LIST_MAX) and each value at 64 KiB: a pax header
// beyond this is no layer's.
constexpr std::uint64_t max_pax_size = 1 << 20;
// Far beyond any file, and small enough that rounding it up to whole blocks cannot overflow.
constexpr std::uint64_t max_entry_size = std::uint64_t{1} << 62;

// The ustar header fields this filter reads or rewrites (POSIX.1-2017, pax "ustar Interchange Format").
constexpr std::size_t name_offset = 0, name_size = 100;
constexpr std::size_t size_offset = 124, size_size = 12;
constexpr std::size_t checksum_offset = 148, checksum_size = 8;
constexpr std::size_t typeflag_offset = 156;
constexpr std::size_t prefix_offset = 345, prefix_size = 155;

// The pax record keys that carry an xattr (GNU tar and Go write SCHILY.xattr., libarchive both);
// the names overlayfs keeps its own state under (kernel Documentation/filesystems/overlayfs.rst).
constexpr std::array xattr_keys{std::string_view("SCHILY.xattr."), std::string_view("LIBARCHIVE.xattr.")};

std::uint64_t padded(std::uint64_t size) {
  return (size + block_size - 1) / block_size * block_size;
}

std::string_view field(std::string_view header, std::size_t offset, std::size_t size) {
  auto text = header.substr(offset, size);
  return text.substr(0, std::min(text.find('\0'), text.size()));
}

// Octal with optional leading spaces and a NUL or space after it, or GNU's base-256 for big values.
std::optional<std::uint64_t> numeric_field(std::string_view header, std::size_t offset, std::size_t size) {
  const auto raw = header.substr(offset, size);
  if ((static_cast<unsigned char>(raw[0]) & 0x80U) != 0) {
    std::uint64_t value = static_cast<unsigned char>(raw[0]) & 0x7fU;
    for (const char byte : raw.substr(1)) {
      if (value > (UINT64_MAX >> 8)) return std::nullopt;
      value = (value << 8) | static_cast<unsigned char>(byte);
    }
    return value;
  }
  auto text = util::trim(field(header, offset, size));
  if (text.empty()) return 0;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 8);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::uint64_t checksum_of(std::string_view header) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < block_size; ++i) {
    const bool in_field = i >= checksum_offset && i < checksum_offset + checksum_size;
    sum += in_field ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(header[i]);
  }
  return sum;
}

// The header's checksum, written as ustar writers do: six octal digits, NUL, space.
void set_checksum(std::string& header) {
  const auto text = fmt::format("{:06o}", checksum_of(header));
  header.replace(checksum_offset, checksum_size, text + std::string("\0 ", 2));
}

// Go (buildah) and the runtimes that unpack layers carry no data for these.
bool header_only(char typeflag) {
  return typeflag == '1' || typeflag == '2' || typeflag == '3' || typeflag == '4' || typeflag == '5' ||
         typeflag == '6';
}

std::optional<std::string_view> overlay_xattr(std::string_view key) {
  for (const auto prefix : xattr_keys) {
    if (!key.starts_with(prefix)) continue;
    if (const auto name = key.substr(prefix.size()); is_overlay_xattr(name)) return name;
  }
  return std::nullopt;
}

struct PaxRecord {
  std::string_view text;  // the whole record, "LEN key=value\n"
  std::string_view key;
  std::string_view value;
};

Result<std::vector<PaxRecord>> pax_records(std::string_view body) {
  std::vector<PaxRecord> records;
  while (!body.empty()) {
    if (body.find_first_not_of('\0') == std::string_view::npos) break;  // padding some writers leave
    std::size_t length = 0;
    const auto space = body.find(' ');
    const auto [end, error] = std::from_chars(body.data(), body.data() + std::min(space, body.size()), length);
    if (space == std::string_view::npos || error != std::errc() || end != body.data() + space || length <= space + 2 ||
        length > body.size() || body[length - 1] != '\n') {
      return fail("a malformed pax record \"{}\"", util::printable(body.substr(0, std::min<std::size_t>(body.size(), 40))));
    }
    const auto record = body.substr(0, length);
    const auto pair = record.substr(space + 1, length - space - 2);
    const auto equals = pair.find('=');
    if (equals == std::string_view::npos || equals == 0) {
      return fail("a malformed pax record \"{}\"", util::printable(record));
    }
    records.push_back({record, pair.substr(0, equals), pair.substr(equals + 1)});
    body.remove_prefix(length);
  }
  return records;
}

}  // namespace

// The names overlayfs keeps its own state under (kernel Documentation/filesystems/overlayfs.rst).
bool is_overlay_xattr(std::string_view name) {
  return name.starts_with("trusted.overlay.") || name.starts_with("user.overlay.");
}

OverlayXattrFilter::OverlayXattrFilter(Sink sink) : m_sink(std::move(sink)) {}

Result<void> OverlayXattrFilter::write(std::string_view bytes) {
  while (!bytes.empty()) {
    if (m_state == State::trailer) return m_sink(bytes);
    if (m_state == State::data) {
      const auto piece = bytes.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(m_data_left, bytes.size())));
      HWIMG_TRY(m_sink(piece));
      bytes.remove_prefix(piece.size());
      m_data_left -= piece.size();
      m_offset += piece.size();
      if (m_data_left == 0) m_state = State::header;
      continue;
    }
    const auto wanted = static_cast<std::size_t>(m_needed - m_pending.size());
    const auto piece = bytes.substr(0, std::min(wanted, bytes.size()));
    m_pending.append(piece);
    bytes.remove_prefix(piece.size());
    if (m_pending.size() < m_needed) continue;
    HWIMG_TRY(m_state == State::pax ? take_pax() : take_header());
  }
  return {};
}

Result<void> OverlayXattrFilter::take_header() {
  const std::string_view header = m_pending;
  if (header.find_first_not_of('\0') == std::string_view::npos) {
    if (m_after_pax) return fail("a pax header that no entry follows, before the end of the archive at byte {}", m_offset);
    // The end-of-archive marker: what follows is its second block and padding.
    m_state = State::trailer;
    HWIMG_TRY(m_sink(header));
    m_pending.clear();
    return {};
  }
  const auto checksum = numeric_field(header, checksum_offset, checksum_size);
  const auto size = numeric_field(header, size_offset, size_size);
  if (!checksum || *checksum != checksum_of(header) || !size) {
    return fail("no tar header at byte {} (its checksum or size field is wrong)", m_offset);
  }
  const char typeflag = header[typeflag_offset];
  if (typeflag == 'x') {
    if (*size > max_pax_size) return fail("a pax header of {} bytes at byte {} (at most {})", *size, m_offset, max_pax_size);
    m_state = State::pax;
    m_needed = block_size + padded(*size);
    return {};
  }
  if (!m_removed.empty()) {
    auto name = m_pax_path;
    if (name.empty()) {
      const auto prefix = field(header, prefix_offset, prefix_size);
      name = (prefix.empty() ? std::string() : std::string(prefix) + "/") + std::string(field(header, name_offset, name_size));
    }
    m_dropped.push_back(fmt::format("{} ({})", util::printable(name), m_removed));
  }
  const auto entry_size = m_pax_size.value_or(*size);
  if (entry_size > max_entry_size) return fail("an entry of {} bytes at byte {} (at most {})", entry_size, m_offset, max_entry_size);
  const auto data = header_only(typeflag) ? 0 : padded(entry_size);
  m_removed.clear();
  m_pax_path.clear();
  m_pax_size.reset();
  m_after_pax = false;
  HWIMG_TRY(m_sink(header));
  m_offset += block_size;
  m_pending.clear();
  m_needed = block_size;
  m_data_left = data;
  m_state = data == 0 ? State::header : State::data;
  return {};
}

Result<void> OverlayXattrFilter::take_pax() {
  const auto size = *numeric_field(m_pending, size_offset, size_size);
  const std::string_view body = std::string_view(m_pending).substr(block_size, static_cast<std::size_t>(size));
  auto records = pax_records(body);
  if (!records) return fail("{} in the pax header at byte {}", records.error().message, m_offset);
  std::string kept;
  std::vector<std::string> removed;
  for (const auto& record : *records) {
    if (const auto name = overlay_xattr(record.key)) {
      removed.emplace_back(*name);
      continue;
    }
    if (record.key == "path") m_pax_path = record.value;
    if (record.key == "size") {
      std::uint64_t value = 0;
      const auto [end, error] = std::from_chars(record.value.data(), record.value.data() + record.value.size(), value);
      if (error != std::errc() || end != record.value.data() + record.value.size()) {
        return fail("a pax size \"{}\" that is not a number at byte {}", util::printable(record.value), m_offset);
      }
      m_pax_size = value;
    }
    kept.append(record.text);
  }
  m_after_pax = true;
  if (removed.empty()) {
    HWIMG_TRY(m_sink(m_pending));
  } else {
    std::ranges::sort(removed);
    removed.erase(std::unique(removed.begin(), removed.end()), removed.end());
    m_removed += (m_removed.empty() ? "" : ", ") + util::join(removed, ", ");
    if (!kept.empty()) {
      auto header = m_pending.substr(0, block_size);
      header.replace(size_offset, size_size, fmt::format("{:011o}", kept.size()) + std::string(1, '\0'));
      set_checksum(header);
      kept.resize(static_cast<std::size_t>(padded(kept.size())), '\0');
      HWIMG_TRY(m_sink(header));
      HWIMG_TRY(m_sink(kept));
    }
  }
  m_offset += m_pending.size();
  m_pending.clear();
  m_needed = block_size;
  m_state = State::header;
  return {};
}

Result<void> OverlayXattrFilter::finish() const {
  if (m_state == State::trailer || (m_state == State::header && m_pending.empty() && !m_after_pax)) return {};
  return fail("the tar ends inside an entry (after byte {})", m_offset + m_pending.size());
}

}  // namespace hwimg::image
