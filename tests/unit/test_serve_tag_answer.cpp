// A tag's document judged for the node: an hwimg index answered with the chosen variant's own
// manifest, anything else unchanged, and no fit answered with the reasons in one line.

#include <doctest/doctest.h>

#include "hwimg/image/memory_reader.hpp"
#include "hwimg/serve/tag_answer.hpp"
#include "test_select_support.hpp"
#include "test_support.hpp"

using namespace hwimg;

namespace {

registry::FetchedManifest document_of(image::MemoryReader& memory, const oci::Descriptor& descriptor) {
  return {memory.read(descriptor).value(), descriptor.media_type, descriptor.digest};
}

struct Stencil {
  image::MemoryReader memory{"registry.example.org/app"};
  oci::Descriptor v2 = test::put_image(memory, {"linux", "amd64", "v2"}, {}, {{"org.hwimg.variant", "cpu-x86-64-v2"},
                                                                          {"org.hwimg.cpu.level", "x86-64-v2"}});
  oci::Descriptor v3 = test::put_image(memory, {"linux", "amd64", "v3"}, {}, {{"org.hwimg.variant", "cpu-x86-64-v3"},
                                                                          {"org.hwimg.cpu.level", "x86-64-v3"}});
  oci::Descriptor index = test::put_index(memory, {v2, v3});
};

}  // namespace

TEST_CASE("an hwimg index is answered with the variant for the node, bytes and digest its own") {
  Stencil s;
  const auto answer = serve::answer_tag(document_of(s.memory, s.index), "registry.example.org/app:1", s.memory,
                                        select_test::cpu_host("x86-64-v3"), {});
  REQUIRE_MESSAGE(answer.has_value(), answer.error().message);
  CHECK(answer->kind == serve::TagAnswer::Kind::variant);
  CHECK(answer->variant == "cpu-x86-64-v3");
  CHECK(answer->digest == s.v3.digest);
  CHECK(answer->media_type == oci::media_type::manifest);
  CHECK(oci::Digest::sha256_of(answer->bytes) == s.v3.digest);
  CHECK(answer->explanation.find("image: registry.example.org/app:1 (2 variants)") != std::string::npos);

  const auto older = serve::answer_tag(document_of(s.memory, s.index), "x", s.memory, select_test::cpu_host("x86-64-v2"), {});
  CHECK(older->digest == s.v2.digest);
}

TEST_CASE("a single manifest and an index without hwimg variants pass unchanged") {
  Stencil s;
  const auto single = serve::answer_tag(document_of(s.memory, s.v2), "x", s.memory, select_test::cpu_host("x86-64-v3"), {});
  REQUIRE(single);
  CHECK(single->kind == serve::TagAnswer::Kind::unchanged);
  CHECK(single->digest == s.v2.digest);
  auto plain = s.v3;
  plain.annotations.clear();
  const auto foreign = test::put_index(s.memory, {plain});
  const auto answer = serve::answer_tag(document_of(s.memory, foreign), "x", s.memory, select_test::cpu_host("x86-64-v1"), {});
  REQUIRE(answer);
  CHECK(answer->kind == serve::TagAnswer::Kind::unchanged);
  CHECK(answer->digest == foreign.digest);
  CHECK(answer->bytes == s.memory.read(foreign).value());
}

TEST_CASE("no fit: the reason in one line, every verdict in the explanation") {
  Stencil s;
  const auto answer = serve::answer_tag(document_of(s.memory, s.index), "registry.example.org/app:1", s.memory,
                                        select_test::arm64_host(), {});
  REQUIRE(answer);
  CHECK(answer->kind == serve::TagAnswer::Kind::no_match);
  CHECK(answer->reason.starts_with("hwimg: no variant of registry.example.org/app:1 runs on this node: cpu-x86-64-v2: "));
  CHECK(answer->reason.find("; cpu-x86-64-v3: ") != std::string::npos);
  CHECK(answer->reason.find('\n') == std::string::npos);
  CHECK(answer->explanation.find("rejected") != std::string::npos);
  CHECK(answer->bytes.empty());
}

TEST_CASE("a variant manifest the source serves wrongly is an error, not an answer") {
  Stencil s;
  s.memory.corrupt(s.v3.digest, "{}");
  const auto answer = serve::answer_tag(document_of(s.memory, s.index), "x", s.memory, select_test::cpu_host("x86-64-v3"), {});
  REQUIRE_FALSE(answer);
  CHECK(answer.error().message.starts_with("failed to read blob " + s.v3.digest.str()));
  CHECK(answer.error().message.find("size is 2 bytes") != std::string::npos);
}
