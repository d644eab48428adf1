#include <doctest/doctest.h>

#include "hwimg/registry/reference.hpp"

using hwimg::registry::is_loopback_host;
using hwimg::registry::parse_reference;

namespace {
std::string normalised(std::string_view text) {
  auto ref = parse_reference(text);
  REQUIRE_MESSAGE(ref, ref.error().message);
  return ref->str();
}
std::string error_of(std::string_view text) {
  auto ref = parse_reference(text);
  REQUIRE(!ref);
  return ref.error().message;
}
}  // namespace

TEST_CASE("references normalise as Docker does") {
  CHECK(normalised("ubuntu") == "docker.io/library/ubuntu");
  CHECK(normalised("ubuntu:22.04") == "docker.io/library/ubuntu:22.04");
  CHECK(normalised("docker.io/ubuntu") == "docker.io/library/ubuntu");
  CHECK(normalised("index.docker.io/team/app:v1") == "docker.io/team/app:v1");
  CHECK(normalised("team/app") == "docker.io/team/app");
  CHECK(normalised("localhost/app") == "localhost/app");
  CHECK(normalised("localhost") == "docker.io/library/localhost");
  CHECK(normalised("127.0.0.1:5443/team/app:v1-cpu") == "127.0.0.1:5443/team/app:v1-cpu");
  CHECK(normalised("Registry.Example.com/a/b") == "Registry.Example.com/a/b");
  CHECK(normalised("[::1]:5000/app") == "[::1]:5000/app");
  CHECK(normalised("reg.example.com/a__b/c-d--e.f") == "reg.example.com/a__b/c-d--e.f");
}

TEST_CASE("reference parts") {
  const auto digest = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
  auto ref = parse_reference(std::string("127.0.0.1:5443/team/app:v1@") + digest);
  REQUIRE(ref);
  CHECK(ref->registry == "127.0.0.1:5443");
  CHECK(ref->repository == "team/app");
  CHECK(ref->tag == "v1");
  CHECK(ref->digest->str() == digest);
  CHECK(ref->host() == "127.0.0.1");
  CHECK(ref->manifest_reference() == digest);
  CHECK(ref->name() == "127.0.0.1:5443/team/app");
  CHECK(ref->with_tag("v2").str() == "127.0.0.1:5443/team/app:v2");

  auto plain = parse_reference("reg.example.com/app");
  REQUIRE(plain);
  CHECK(plain->tag.empty());
  CHECK(plain->manifest_reference() == "latest");
  CHECK(parse_reference("[::1]:5000/app")->host() == "::1");
}

TEST_CASE("a reference with a control character is refused on one line") {
  const auto newline = parse_reference("127.0.0.1:5000/a\nb:c");
  REQUIRE(!newline);
  CHECK(newline.error().message == "failed to parse reference \"127.0.0.1:5000/a\\nb:c\": it holds a control character");
  CHECK(newline.error().message.find('\n') == std::string::npos);
  CHECK(!parse_reference(std::string("r/a\0b:c", 8)));
  CHECK(!parse_reference("r/a:c\x1b[0m"));
}

TEST_CASE("malformed references name what is wrong") {
  CHECK(error_of("") == "failed to parse reference \"\": it is empty");
  CHECK(error_of("reg.example.com/Team/app") ==
        "failed to parse reference \"reg.example.com/Team/app\": repository name must be lowercase");
  CHECK(error_of("reg.example.com/app:-bad") ==
        "failed to parse reference \"reg.example.com/app:-bad\": invalid tag \"-bad\": it cannot start with '-'");
  CHECK(error_of("reg.example.com/app:a+b") ==
        "failed to parse reference \"reg.example.com/app:a+b\": invalid tag \"a+b\": character '+' is not allowed");
  CHECK(error_of("reg.example.com/app@sha256:abc") ==
        "failed to parse reference \"reg.example.com/app@sha256:abc\": invalid digest \"sha256:abc\" (expected "
        "sha256:<64 hex digits>)");
  CHECK(error_of("reg.example.com:port/app") ==
        "failed to parse reference \"reg.example.com:port/app\": invalid port \"port\"");
  CHECK(error_of("reg.example.com:/app") == "failed to parse reference \"reg.example.com:/app\": invalid port \"\"");
  CHECK(error_of("-reg.example.com/app") ==
        "failed to parse reference \"-reg.example.com/app\": invalid registry host \"-reg.example.com\"");
  CHECK(error_of("reg.example.com/a//b") ==
        "failed to parse reference \"reg.example.com/a//b\": invalid repository name component \"\"");
  CHECK(error_of("reg.example.com/a...b") ==
        "failed to parse reference \"reg.example.com/a...b\": invalid repository name component \"a...b\"");
  CHECK(error_of("reg.example.com/") == "failed to parse reference \"reg.example.com/\": invalid repository name component \"\"");
  CHECK(error_of(std::string(64, 'a')) ==
        fmt::format("failed to parse reference \"{}\": a repository name cannot be 64 hex digits", std::string(64, 'a')));
  CHECK(error_of("reg.example.com/" + std::string(250, 'a')).ends_with("the name is longer than 255 characters"));
  CHECK(error_of("reg.example.com/app:" + std::string(129, 't')).ends_with("longer than 128 characters"));
  CHECK(error_of("[::1/app") == "failed to parse reference \"[::1/app\": unterminated IPv6 address in \"[::1\"");
}

TEST_CASE("loopback hosts") {
  CHECK(is_loopback_host("localhost"));
  CHECK(is_loopback_host("127.0.0.1"));
  CHECK(is_loopback_host("127.1.2.3"));
  CHECK(is_loopback_host("::1"));
  CHECK_FALSE(is_loopback_host("192.0.2.1"));
  CHECK_FALSE(is_loopback_host("127.0.0.1.example.com"));
  CHECK_FALSE(is_loopback_host("reg.example.com"));
}
