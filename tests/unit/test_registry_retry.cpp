#include <doctest/doctest.h>

#include "hwimg/registry/detail/retry.hpp"

using namespace hwimg::registry;
using namespace std::chrono;

namespace {

// 1994-11-06 08:49:37 UTC, RFC 9110's example date.
const system_clock::time_point rfc_example = sys_days(year(1994) / November / 6) + hours(8) + minutes(49) + seconds(37);

Response answer(long status, std::string body) {
  Response r;
  r.status = status;
  r.headers.emplace_back("content-type", "application/json");
  r.body = std::move(body);
  return r;
}

}  // namespace

TEST_CASE("Retry-After: delay-seconds") {
  CHECK(parse_retry_after("0", rfc_example) == seconds(0));
  CHECK(parse_retry_after(" 120 ", rfc_example) == seconds(120));
  CHECK(parse_retry_after("99999999999999999999999", rfc_example) == seconds::max());
  CHECK_FALSE(parse_retry_after("-5", rfc_example));
  CHECK_FALSE(parse_retry_after("1.5", rfc_example));
  CHECK_FALSE(parse_retry_after("", rfc_example));
}

TEST_CASE("Retry-After: an HTTP-date in each of RFC 9110's three forms") {
  const auto before = rfc_example - seconds(30);
  CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", before) == seconds(30));
  CHECK(parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", before) == seconds(30));
  CHECK(parse_retry_after("Sun Nov  6 08:49:37 1994", before) == seconds(30));
  // A date in the past means: now.
  CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", rfc_example + hours(1)) == seconds(0));
  // Parts of a second round up, never retrying early.
  CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", rfc_example - milliseconds(1500)) == seconds(2));
}

TEST_CASE("Retry-After: a two-digit year more than 50 years ahead is in the past century") {
  const system_clock::time_point in_2030 = sys_days(year(2030) / January / 1);
  CHECK(parse_retry_after("Tuesday, 01-Jan-30 00:00:10 GMT", in_2030) == seconds(10));
  // 2094 would be 64 years ahead: it is 1994, long past.
  CHECK(parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", in_2030) == seconds(0));
}

TEST_CASE("Retry-After: what is not a date is ignored") {
  for (const auto* text : {"Sun, 06 Nov 1994 08:49:37 CET", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:00:00 GMT",
                           "Sun, 06 Foo 1994 08:49:37 GMT", "06 Nov 1994 08:49:37 GMT", "soon", "Sun Nov  6 08:49 1994",
                           "1, 06 Nov 1994 08:49:37 GMT"}) {
    CAPTURE(text);
    CHECK_FALSE(parse_retry_after(text, rfc_example));
  }
}

TEST_CASE("backoff takes an HTTP-date Retry-After, capped, and falls back on garbage") {
  std::mt19937 random(7);
  Response r;
  r.status = 503;
  r.headers.emplace_back("retry-after", "Sun, 06 Nov 1994 08:49:47 GMT");
  CHECK(backoff_delay(r, 0, random, rfc_example) == milliseconds(10'000));
  r.headers.back().second = "Sun, 06 Nov 1994 09:49:37 GMT";  // an hour: capped
  CHECK(backoff_delay(r, 0, random, rfc_example) == duration_cast<milliseconds>(max_retry_after));
  r.headers.back().second = "whenever";
  const auto fallback = backoff_delay(r, 0, random, rfc_example);
  CHECK(fallback >= milliseconds(200));
  CHECK(fallback <= milliseconds(300));
}

TEST_CASE("a registry's error codes are read from its JSON body") {
  CHECK(error_codes(answer(400, R"({"errors":[{"code":"DIGEST_INVALID"},{"code":"MANIFEST_BLOB_UNKNOWN"}]})")) ==
        std::vector<std::string>{"DIGEST_INVALID", "MANIFEST_BLOB_UNKNOWN"});
  CHECK(error_codes(answer(400, "not json")).empty());
  CHECK(error_codes(answer(400, R"({"errors":"MANIFEST_BLOB_UNKNOWN"})")).empty());
  CHECK(error_codes(answer(400, R"({"errors":[{"code":7},"x"]})")).empty());
}

TEST_CASE("a manifest PUT is retried after a blob check only on MANIFEST_BLOB_UNKNOWN") {
  // What Debian's 2.8.2 answers while another push of the same blob rewrites its link.
  CHECK(manifest_blob_unknown(answer(400, R"({"errors":[{"code":"DIGEST_INVALID","message":"provided digest did not )"
                                          R"(match uploaded content"},{"code":"MANIFEST_BLOB_UNKNOWN"}]})")));
  CHECK(manifest_blob_unknown(answer(400, R"({"errors":[{"code":"MANIFEST_BLOB_UNKNOWN"}]})")));
  CHECK_FALSE(manifest_blob_unknown(answer(400, R"({"errors":[{"code":"MANIFEST_INVALID"}]})")));
  CHECK_FALSE(manifest_blob_unknown(answer(400, "MANIFEST_BLOB_UNKNOWN")));
  CHECK_FALSE(manifest_blob_unknown(answer(201, R"({"errors":[{"code":"MANIFEST_BLOB_UNKNOWN"}]})")));
  Response dropped;
  dropped.failure = TransportFailure::connect;
  CHECK_FALSE(manifest_blob_unknown(dropped));
}

TEST_CASE("a blob upload starts over on a lost session or DIGEST_INVALID, not on other refusals") {
  CHECK(upload_restartable(answer(404, R"({"errors":[{"code":"BLOB_UPLOAD_UNKNOWN"}]})")));
  CHECK(upload_restartable(answer(404, R"({"errors":[{"code":"BLOB_UPLOAD_INVALID"}]})")));
  CHECK(upload_restartable(answer(400, R"({"errors":[{"code":"DIGEST_INVALID"}]})")));
  CHECK_FALSE(upload_restartable(answer(400, R"({"errors":[{"code":"SIZE_INVALID"}]})")));
  CHECK_FALSE(upload_restartable(answer(403, R"({"errors":[{"code":"DENIED"}]})")));
  CHECK_FALSE(upload_restartable(answer(404, R"({"errors":[{"code":"NAME_UNKNOWN"}]})")));
}

TEST_CASE("a retry is announced with its cause, its wait and its count") {
  Response refused;
  refused.url = "https://192.0.2.7:5000/v2/app/manifests/1.0";
  refused.failure = TransportFailure::unreachable;
  CHECK(retry_notice(refused, 0, 8, milliseconds(240)) ==
        "192.0.2.7:5000 refused the connection; retrying in 0.2 s (2/8)");
  auto busy = answer(503, R"({"errors":[{"code":"UNAVAILABLE","message":"busy"}]})");
  busy.url = "https://reg.example.org/v2/";
  CHECK(retry_notice(busy, 6, 8, milliseconds(10'000)) ==
        "reg.example.org answered HTTP 503 UNAVAILABLE; retrying in 10 s (8/8)");
  Response slow;
  slow.url = "https://reg.example.org/v2/";
  slow.failure = TransportFailure::timeout;
  CHECK(retry_notice(slow, 1, 8, milliseconds(1'250)) == "reg.example.org did not answer in time; retrying in 1.2 s (3/8)");
}
