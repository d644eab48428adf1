#include <doctest/doctest.h>

#include "hwimg/oci/digest.hpp"

using hwimg::oci::Digest;

TEST_CASE("sha256 of known data") {
  CHECK(Digest::sha256_of("").str() ==
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Digest::sha256_of("{}").str() ==
        "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
}

TEST_CASE("short forms keep the first 12 hex digits") {
  const auto digest = Digest::sha256_of("{}");
  CHECK(digest.short_hex() == "44136fa355b3");
  CHECK(digest.short_str() == "sha256:44136fa355b3");
}

TEST_CASE("digest parsing names what is wrong") {
  CHECK(Digest::parse("sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"));
  CHECK(Digest::parse("sha512:abc").error().message ==
        "failed to parse digest \"sha512:abc\": unsupported algorithm \"sha512\" (expected sha256)");
  CHECK(Digest::parse("sha256:abc").error().message ==
        "failed to parse digest \"sha256:abc\": expected 64 hex digits, got 3");
  CHECK(Digest::parse("sha256:44136FA355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a")
            .error()
            .message.ends_with("'F' is not a lower-case hex digit"));
}
