#include "hwimg/util/duration.hpp"

#include <charconv>

namespace hwimg::util {

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (error != std::errc() || end == text.data()) {
    return fail_usage("invalid duration \"{}\": expected a number with ms, s, m, h or d, such as 60s", text);
  }
  std::uint64_t scale = 0;
  if (unit == "ms") scale = 1;
  else if (unit.empty() || unit == "s") scale = 1000;
  else if (unit == "m") scale = 60'000;
  else if (unit == "h") scale = 3'600'000;
  else if (unit == "d") scale = 86'400'000;
  else return fail_usage("invalid duration \"{}\": unknown unit \"{}\" (expected ms, s, m, h or d)", text, unit);
  constexpr std::uint64_t limit = std::uint64_t{1} << 40;
  if (value > limit / scale) return fail_usage("invalid duration \"{}\": too long", text);
  return std::chrono::milliseconds(static_cast<std::int64_t>(value * scale));
}

}  // namespace hwimg::util
