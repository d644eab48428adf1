#include "hwimg/registry/detail/retry.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "hwimg/registry/detail/url.hpp"
#include "hwimg/registry/response.hpp"
#include "hwimg/util/strings.hpp"
#include "hwimg/util/json_reader.hpp"

namespace hwimg::registry {
namespace {

using namespace std::chrono;

std::optional<int> retry_date_number(std::string_view text, std::size_t min_digits, std::size_t max_digits) {
  if (text.size() < min_digits || text.size() > max_digits) return std::nullopt;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<unsigned> retry_date_month(std::string_view name) {
  static constexpr std::array<std::string_view, 12> names{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (unsigned i = 0; i < names.size(); ++i) {
    if (name == names[i]) return i + 1;
  }
  return std::nullopt;
}

// "08:49:37" as seconds into the day.
std::optional<seconds> retry_date_time(std::string_view text) {
  const auto parts = util::split(text, ':');
  if (parts.size() != 3) return std::nullopt;
  const auto h = retry_date_number(parts[0], 2, 2);
  const auto m = retry_date_number(parts[1], 2, 2);
  const auto s = retry_date_number(parts[2], 2, 2);
  if (!h || !m || !s || *h > 23 || *m > 59 || *s > 60) return std::nullopt;
  return hours(*h) + minutes(*m) + seconds(*s);
}

bool retry_date_weekday(std::string_view text) {
  return text.size() >= 3 && std::ranges::all_of(text, [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
}

// IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", obsolete RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT"
// and asctime "Sun Nov  6 08:49:37 1994" (RFC 9110 §5.6.7).
std::optional<system_clock::time_point> parse_http_date(std::string_view value, system_clock::time_point now) {
  std::string spaced(value);
  std::ranges::replace(spaced, ',', ' ');
  std::ranges::replace(spaced, '-', ' ');
  auto words = util::split(spaced, ' ');
  std::erase_if(words, [](const std::string& word) { return word.empty(); });
  std::optional<int> day, year;
  std::optional<unsigned> month;
  std::optional<seconds> time;
  if (words.size() == 6 && words[5] == "GMT") {
    day = retry_date_number(words[1], 1, 2);
    month = retry_date_month(words[2]);
    year = retry_date_number(words[3], 2, 4);
    time = retry_date_time(words[4]);
    if (year && words[3].size() == 2) {
      // A two-digit year more than 50 years ahead is the last such year in the past.
      const int this_year = static_cast<int>(year_month_day(floor<days>(now)).year());
      *year += this_year / 100 * 100;
      if (*year > this_year + 50) *year -= 100;
    }
  } else if (words.size() == 5) {
    month = retry_date_month(words[1]);
    day = retry_date_number(words[2], 1, 2);
    time = retry_date_time(words[3]);
    year = retry_date_number(words[4], 4, 4);
  }
  if (words.empty() || !retry_date_weekday(words[0]) || !day || !month || !year || !time) return std::nullopt;
  const year_month_day date{std::chrono::year(*year), std::chrono::month(*month),
                            std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) return std::nullopt;
  return sys_days(date) + *time;
}

}  // namespace

bool is_transient(const Response& r) {
  if (!r.ok()) {
    return r.failure == TransportFailure::unreachable || r.failure == TransportFailure::connect ||
           r.failure == TransportFailure::timeout ||
           r.failure == TransportFailure::truncated;
  }
  return r.status == 408 || r.status == 429 || (r.status >= 500 && r.status <= 599);
}

std::optional<seconds> parse_retry_after(std::string_view value, system_clock::time_point now) {
  const auto text = util::trim(value);
  if (!text.empty() && std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; })) {
    std::int64_t count = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (error == std::errc::result_out_of_range) return seconds::max();
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return seconds(count);
  }
  const auto date = parse_http_date(text, now);
  if (!date) return std::nullopt;
  return std::max(seconds(0), ceil<seconds>(*date - now));
}

milliseconds backoff_delay(const Response& r, unsigned attempt, std::mt19937& random, system_clock::time_point now) {
  if (const auto after = r.header("retry-after")) {
    if (const auto wait = parse_retry_after(*after, now)) return std::min<milliseconds>(*wait, max_retry_after);
  }
  const auto base = std::min<std::int64_t>(200ll << std::min(attempt, 10u), 10'000);
  std::uniform_int_distribution<std::int64_t> jitter(0, base / 2);
  return milliseconds(base + jitter(random));
}

std::string retry_notice(const Response& r, unsigned attempt, unsigned attempts, milliseconds delay) {
  const auto registry = url_authority(r.url);
  std::string cause;
  switch (r.failure) {
    case TransportFailure::none: cause = fmt::format("{} answered {}", registry, describe_status(r)); break;
    case TransportFailure::unreachable: cause = fmt::format("{} refused the connection", registry); break;
    case TransportFailure::timeout: cause = fmt::format("{} did not answer in time", registry); break;
    case TransportFailure::truncated:
      cause = fmt::format("{} closed the connection before the whole answer arrived", registry);
      break;
    default: cause = fmt::format("could not reach {} ({})", registry, describe(r)); break;
  }
  const auto wait = delay < seconds(10) ? fmt::format("{:.1f}", static_cast<double>(delay.count()) / 1000.0)
                                        : fmt::format("{}", duration_cast<seconds>(delay).count());
  return fmt::format("{}; retrying in {} s ({}/{})", cause, wait, attempt + 2, attempts);
}

std::vector<std::string> error_codes(const Response& r) {
  std::vector<std::string> codes;
  const auto body = util::json::parse_object(r.body);
  if (!body) return codes;
  const auto errors = body->find("errors");
  if (errors == body->end() || !errors->is_array()) return codes;
  for (const auto& e : *errors) {
    if (!e.is_object()) continue;
    if (auto code = util::json::string_member(e, "code"); code && *code) codes.push_back(std::move(**code));
  }
  return codes;
}

bool manifest_blob_unknown(const Response& r) {
  if (!r.ok() || r.status < 400 || r.status > 499) return false;
  const auto codes = error_codes(r);
  return std::ranges::find(codes, "MANIFEST_BLOB_UNKNOWN") != codes.end();
}

bool upload_restartable(const Response& r) {
  if (!r.ok()) return false;
  const auto codes = error_codes(r);
  const auto has = [&](std::string_view code) { return std::ranges::find(codes, code) != codes.end(); };
  if (r.status == 404) return has("BLOB_UPLOAD_UNKNOWN") || has("BLOB_UPLOAD_INVALID");
  return r.status == 400 && has("DIGEST_INVALID");
}

}  // namespace hwimg::registry
