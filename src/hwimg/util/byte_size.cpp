#include "hwimg/util/byte_size.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <limits>

#include <fmt/format.h>

namespace hwimg::util {
namespace {

constexpr std::string_view expected = "expected a number of bytes with k, M, G or T (powers of 1000) or Ki, Mi, Gi "
                                      "or Ti (powers of 1024), such as 20G";

// The multiplier a unit stands for; 0 when it is not one.
std::uint64_t unit_scale(std::string_view unit) {
  if (unit.ends_with('B') || unit.ends_with('b')) unit.remove_suffix(1);
  if (unit.empty()) return 1;
  const bool binary = unit.size() == 2 && (unit[1] == 'i' || unit[1] == 'I');
  if (unit.size() != 1 && !binary) return 0;
  const std::uint64_t base = binary ? 1024 : 1000;
  std::uint64_t scale = 1;
  for (const char prefix : std::string_view("kmgt")) {
    scale *= base;
    if (std::tolower(static_cast<unsigned char>(unit[0])) == prefix) return scale;
  }
  return 0;
}

}  // namespace

Result<std::uint64_t> parse_byte_size(std::string_view text) {
  const auto* const begin = text.data();
  const auto* const end = text.data() + text.size();
  std::uint64_t whole = 0;
  auto [cursor, error] = std::from_chars(begin, end, whole);
  if (error != std::errc() || cursor == begin) return fail_usage("invalid size \"{}\": {}", text, expected);
  // A fraction of up to three digits ("1.5G"), kept exact rather than through a double.
  std::uint64_t fraction = 0;
  std::uint64_t fraction_scale = 1;
  if (cursor != end && *cursor == '.') {
    ++cursor;
    while (cursor != end && std::isdigit(static_cast<unsigned char>(*cursor)) != 0) {
      if (fraction_scale == 1000) return fail_usage("invalid size \"{}\": at most three decimals", text);
      fraction = fraction * 10 + static_cast<std::uint64_t>(*cursor - '0');
      fraction_scale *= 10;
      ++cursor;
    }
    if (fraction_scale == 1) return fail_usage("invalid size \"{}\": {}", text, expected);
  }
  while (cursor != end && *cursor == ' ') ++cursor;
  const std::string_view unit(cursor, static_cast<std::size_t>(end - cursor));
  const auto scale = unit_scale(unit);
  if (scale == 0) return fail_usage("invalid size \"{}\": unknown unit \"{}\" ({})", text, unit, expected);
  constexpr auto limit = std::numeric_limits<std::uint64_t>::max();
  if (whole > limit / scale) return fail_usage("invalid size \"{}\": too large", text);
  return whole * scale + fraction * scale / fraction_scale;
}

std::string format_byte_size(std::uint64_t bytes) {
  static constexpr std::array units{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  auto value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < units.size()) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

}  // namespace hwimg::util
