#include <doctest/doctest.h>

#include <deque>
#include <string>

#include "hwimg/registry/verified_stream.hpp"

using namespace hwimg;
using registry::VerifiedStream;

namespace {

// A source that hands out `pieces`, then its end (or `error` instead of the end).
VerifiedStream::Source pieces_of(std::deque<std::string> pieces, std::string error = {}) {
  return [pieces = std::move(pieces), error = std::move(error)]() mutable -> Result<std::optional<std::string>> {
    if (pieces.empty()) {
      if (!error.empty()) return fail("{}", error);
      return std::optional<std::string>();
    }
    auto piece = std::move(pieces.front());
    pieces.pop_front();
    return std::optional<std::string>(std::move(piece));
  };
}

// Everything the stream hands on, and how it ended: "" when it ended verified.
std::pair<std::string, std::string> drain(VerifiedStream& stream) {
  std::string received;
  while (true) {
    auto piece = stream.next();
    if (!piece) return {received, piece.error().message};
    if (!*piece) return {received, ""};
    received += **piece;
  }
}

}  // namespace

TEST_CASE("verified stream: the blob asked for passes whole, in its pieces") {
  const std::string blob = "layer bytes, in three pieces";
  VerifiedStream stream(pieces_of({"layer ", "bytes, in ", "three pieces"}), oci::Digest::sha256_of(blob), blob.size());
  const auto [received, error] = drain(stream);
  CHECK(error.empty());
  CHECK(received == blob);
  // Once ended, it stays ended.
  const auto after = stream.next();
  REQUIRE(after.has_value());
  CHECK_FALSE(after->has_value());
}

TEST_CASE("verified stream: other bytes never reach the reader whole, and the error names both digests") {
  const std::string blob = "the real blob";
  const std::string served = "the fake blob";
  VerifiedStream stream(pieces_of({"the ", "fake ", "blob"}), oci::Digest::sha256_of(blob));
  const auto [received, error] = drain(stream);
  CHECK(received.size() < served.size());
  CHECK(error == "blob " + oci::Digest::sha256_of(blob).str() + " does not match its digest (content hashes to " +
                     oci::Digest::sha256_of(served).str() + ")");
}

TEST_CASE("verified stream: a body longer than the descriptor is stopped there; a shorter one fails at its end") {
  const std::string blob = "12345";
  {
    VerifiedStream stream(pieces_of({"123", "456", "789"}), oci::Digest::sha256_of(blob), 5);
    const auto [received, error] = drain(stream);
    CHECK(received == "");
    CHECK(error == "blob " + oci::Digest::sha256_of(blob).str() + " is larger than its descriptor's 5 bytes");
  }
  {
    VerifiedStream stream(pieces_of({"12", "34"}), oci::Digest::sha256_of(blob), 5);
    const auto [received, error] = drain(stream);
    CHECK(received == "12");
    CHECK(error == "blob " + oci::Digest::sha256_of(blob).str() + " has 4 bytes, not its descriptor's 5");
  }
}

TEST_CASE("verified stream: a transfer that breaks ends with its error, the held piece kept back") {
  const std::string blob = "abcdef";
  VerifiedStream stream(pieces_of({"abc", "def"}, "the connection closed"), oci::Digest::sha256_of(blob), blob.size());
  const auto [received, error] = drain(stream);
  CHECK(received == "abc");
  CHECK(error == "the connection closed");
}

TEST_CASE("verified stream: an empty blob, and empty pieces, verify") {
  VerifiedStream empty(pieces_of({}), oci::Digest::sha256_of(""), 0);
  CHECK(drain(empty) == std::pair<std::string, std::string>{"", ""});
  VerifiedStream gaps(pieces_of({"", "ab", "", "c", ""}), oci::Digest::sha256_of("abc"), 3);
  CHECK(drain(gaps) == std::pair<std::string, std::string>{"abc", ""});
}
