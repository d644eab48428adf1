#include <doctest/doctest.h>

#include <random>

#include "hwimg/registry/detail/http.hpp"
#include "hwimg/registry/detail/session.hpp"

using namespace hwimg::registry;

TEST_CASE("URLs in logs hide upload state and tokens") {
  CHECK(redact_url("https://r/v2/a/blobs/uploads/u?_state=abc%3D&digest=sha256%3A00") ==
        "https://r/v2/a/blobs/uploads/u?_state=REDACTED&digest=sha256%3A00");
  CHECK(redact_url("https://auth/token?service=s&access_token=xyz") == "https://auth/token?service=s&access_token=REDACTED");
  CHECK(redact_url("https://r/v2/") == "https://r/v2/");
}

TEST_CASE("URLs in logs hide the signatures of blob storage in any letter case, and userinfo") {
  // S3 pre-signed (query keys in any case), Azure SAS, Google signed URLs.
  CHECK(redact_url("https://s3/b?X-Amz-Security-Token=t&x-amz-signature=s&X-AMZ-CREDENTIAL=c&partNumber=1") ==
        "https://s3/b?X-Amz-Security-Token=REDACTED&x-amz-signature=REDACTED&X-AMZ-CREDENTIAL=REDACTED&partNumber=1");
  CHECK(redact_url("https://a.blob.core.windows.net/c/b?sv=2021&se=2026&sp=r&SIG=abc%3D") ==
        "https://a.blob.core.windows.net/c/b?sv=2021&se=2026&sp=r&SIG=REDACTED");
  CHECK(redact_url("https://storage.googleapis.com/b/o?X-Goog-Signature=1&X-Goog-Credential=2&generation=3") ==
        "https://storage.googleapis.com/b/o?X-Goog-Signature=REDACTED&X-Goog-Credential=REDACTED&generation=3");
  CHECK(redact_url("https://AUTH/token?Password=p&ACCESS_TOKEN=x") == "https://AUTH/token?Password=REDACTED&ACCESS_TOKEN=REDACTED");
  CHECK(redact_url("https://user:secret@r:5000/v2/x?n=1") == "https://REDACTED@r:5000/v2/x?n=1");
  CHECK(redact_url("http://user@r/v2/") == "http://REDACTED@r/v2/");
  // An @ after the authority is not userinfo.
  CHECK(redact_url("https://r/v2/a@b?x=y@z") == "https://r/v2/a@b?x=y@z");
}

TEST_CASE("Location headers resolve against the request URL") {
  const std::string base = "https://127.0.0.1:5443/v2/a/blobs/uploads/?mount=x";
  CHECK(resolve_url(base, "https://other:1/u?_state=1") == "https://other:1/u?_state=1");
  CHECK(resolve_url(base, "/v2/a/blobs/uploads/uuid?_state=1") == "https://127.0.0.1:5443/v2/a/blobs/uploads/uuid?_state=1");
  CHECK(resolve_url(base, "uuid") == "https://127.0.0.1:5443/v2/a/blobs/uploads/uuid");
  CHECK(resolve_url("http://h/v2/a/tags/list", "/v2/a/tags/list?last=b&n=2") == "http://h/v2/a/tags/list?last=b&n=2");
}

TEST_CASE("query values are percent-encoded") {
  CHECK(url_encode("sha256:ab") == "sha256%3Aab");
  CHECK(url_encode("repository:a/b:pull,push") == "repository%3Aa%2Fb%3Apull%2Cpush");
  CHECK(url_encode("A-z_0.~") == "A-z_0.~");
}

TEST_CASE("tags/list pagination follows the Link header whose rel is next") {
  Response response;
  CHECK(next_page_link(response).empty());
  response.headers = {{"link", "<tags/list?last=x>; rel=\"prev\", </v2/a/tags/list?last=b&n=2>; rel=\"next\""}};
  CHECK(next_page_link(response) == "/v2/a/tags/list?last=b&n=2");
  response.headers = {{"link", "<https://h/v2/a/tags/list?last=c>; rel=next"}};
  CHECK(next_page_link(response) == "https://h/v2/a/tags/list?last=c");
  response.headers = {{"link", ">< rel=\"next\""}, {"link", "</x>; rel=\"last\""}};
  CHECK(next_page_link(response).empty());
}

TEST_CASE("transient answers are retried, others are not") {
  Response r;
  r.status = 503;
  CHECK(is_transient(r));
  r.status = 429;
  CHECK(is_transient(r));
  r.status = 408;
  CHECK(is_transient(r));
  r.status = 404;
  CHECK_FALSE(is_transient(r));
  r.status = 400;
  CHECK_FALSE(is_transient(r));
  r.failure = TransportFailure::connect;
  CHECK(is_transient(r));
  r.failure = TransportFailure::truncated;
  CHECK(is_transient(r));
  r.failure = TransportFailure::tls_verify;
  CHECK_FALSE(is_transient(r));
}

TEST_CASE("backoff doubles with jitter and honours Retry-After") {
  std::mt19937 random(42);
  Response r;
  r.status = 503;
  for (unsigned attempt = 0; attempt < 4; ++attempt) {
    const auto base = 200 << attempt;
    const auto delay = backoff_delay(r, attempt, random).count();
    CHECK(delay >= base);
    CHECK(delay <= base + base / 2);
  }
  CHECK(backoff_delay(r, 20, random).count() <= 15'000);
  r.headers.emplace_back("retry-after", "3");
  CHECK(backoff_delay(r, 0, random).count() == 3000);
  r.headers.back().second = "100000";
  CHECK(backoff_delay(r, 0, random).count() == 60'000);
}

TEST_CASE("registry errors are described from their JSON body") {
  Response r;
  r.status = 400;
  r.headers.emplace_back("content-type", "application/json; charset=utf-8");
  r.body = R"({"errors":[{"code":"MANIFEST_BLOB_UNKNOWN","message":"blob unknown to registry","detail":"sha256:aa"},)"
           R"({"code":"MANIFEST_INVALID","message":"manifest invalid","detail":null}]})";
  CHECK(describe(r) ==
        "HTTP 400 MANIFEST_BLOB_UNKNOWN: blob unknown to registry (sha256:aa); MANIFEST_INVALID: manifest invalid");
  Response detailed;  // a detail object in words, never as JSON (issue 25)
  detailed.status = 404;
  detailed.headers.emplace_back("content-type", "application/json");
  detailed.body = R"({"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"1.1","N":2}}]})";
  CHECK(describe(detailed) == "HTTP 404 MANIFEST_UNKNOWN: manifest unknown (n 2, tag 1.1)");
  detailed.body = R"({"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"repository","Name":"app","Action":"pull"}]}]})";
  CHECK(describe(detailed) == "HTTP 404 UNAUTHORIZED: authentication required");
  Response text;
  text.status = 404;
  text.headers.emplace_back("content-type", "text/plain; charset=utf-8");
  text.body = "404 page not found\n";
  CHECK(describe(text) == "HTTP 404: 404 page not found");
  Response odd;  // fields of other types than the spec's are shown, not thrown (issue 23, F1)
  odd.status = 500;
  odd.headers.emplace_back("content-type", "application/json");
  odd.body = R"({"errors":[{"code":1,"message":["a","b"]},{"code":null},"not an object"]})";
  CHECK(describe(odd) == "HTTP 500 1: [\"a\",\"b\"]");
  Response dropped;
  dropped.failure = TransportFailure::connect;
  dropped.error = "Couldn't connect to server";
  CHECK(describe(dropped) == "connection failed: Couldn't connect to server");
}

TEST_CASE("origins: credentials follow a redirect only to the same scheme, host and port") {
  CHECK(url_origin("https://Reg.Example.com:443/v2/app/blobs/sha256:aa?x=1") == "https://reg.example.com");
  CHECK(url_origin("http://127.0.0.1:5000") == "http://127.0.0.1:5000");
  CHECK(url_origin("https://user:pw@reg.example.com/v2/") == "https://reg.example.com");
  CHECK(url_origin("/v2/app") == "");
  CHECK(same_origin("https://reg.example.com/v2/a", "https://reg.example.com:443/b"));
  CHECK_FALSE(same_origin("https://reg.example.com/v2/a", "https://storage.example.com/b"));
  CHECK_FALSE(same_origin("https://127.0.0.1:5000/v2/a", "https://127.0.0.1:5001/v2/a"));
  CHECK_FALSE(same_origin("https://reg.example.com/v2/a", "http://reg.example.com/v2/a"));
  CHECK_FALSE(same_origin("/v2/a", "/v2/a"));
  std::vector<std::string> headers{"Accept: */*", "authorization: Basic eDp5", "Authorization: Bearer t", "Range: 0-1"};
  strip_authorization(headers);
  CHECK(headers == std::vector<std::string>{"Accept: */*", "Range: 0-1"});
}

TEST_CASE("an answer cut off at its limit says so, keeping an error status") {
  CHECK(too_large_error(200, 4194304) == "answer larger than 4194304 bytes");
  CHECK(too_large_error(404, 1048576) == "HTTP 404 with an answer larger than 1048576 bytes");
}

TEST_CASE("token answers: access_token else token; expires_in of any type or size never throws") {
  const auto token = parse_token_answer(R"({"token":"t1","access_token":"a1","expires_in":300})");
  REQUIRE_MESSAGE(token, token.error().message);
  CHECK(token->token == "a1");
  CHECK(token->lifetime == std::chrono::seconds(300));
  CHECK(parse_token_answer(R"({"token":"t1"})")->token == "t1");
  CHECK(parse_token_answer(R"({"token":"t1"})")->lifetime == std::chrono::seconds(60));
  CHECK(parse_token_answer(R"({"token":"t","expires_in":"300"})")->lifetime == std::chrono::seconds(60));
  CHECK(parse_token_answer(R"({"token":"t","expires_in":9223372036854775807})")->lifetime == std::chrono::hours(24));
  CHECK(parse_token_answer(R"({"token":"t","expires_in":-5})")->lifetime == std::chrono::seconds(60));
  CHECK(parse_token_answer(R"({"expires_in":300})").error().message == "the answer holds no token");
  CHECK(parse_token_answer(R"([1,2])").error().message == "the answer is not a JSON object");
  CHECK_FALSE(parse_token_answer(R"({"access_token":7})"));
}
