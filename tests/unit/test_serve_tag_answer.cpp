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

TEST_CASE("--foreign select: an index made by others is answered with the entry select picks by platform level") {
  Stencil s;
  // What docker buildx writes for amd64 levels: platforms only, no hwimg annotations.
  auto v2 = s.v2;
  auto v3 = s.v3;
  v2.annotations.clear();
  v3.annotations.clear();
  const auto foreign = test::put_index(s.memory, {v2, v3});
  const auto document = document_of(s.memory, foreign);
  const auto passed = serve::answer_tag(document, "x", s.memory, select_test::cpu_host("x86-64-v3"), {});
  REQUIRE(passed);
  CHECK(passed->kind == serve::TagAnswer::Kind::unchanged);  // the default: pass-through
  const auto v3_host = serve::answer_tag(document, "x", s.memory, select_test::cpu_host("x86-64-v3"), {},
                                         serve::ForeignImages::select);
  REQUIRE_MESSAGE(v3_host.has_value(), v3_host.error().message);
  CHECK(v3_host->kind == serve::TagAnswer::Kind::variant);
  CHECK(v3_host->digest == v3.digest);
  const auto v2_host = serve::answer_tag(document, "x", s.memory, select_test::cpu_host("x86-64-v2"), {},
                                         serve::ForeignImages::select);
  REQUIRE(v2_host);
  CHECK(v2_host->digest == v2.digest);
  const auto v1_host = serve::answer_tag(document, "registry.example.org/other:1", s.memory,
                                         select_test::cpu_host("x86-64-v1"), {}, serve::ForeignImages::select);
  REQUIRE(v1_host);
  CHECK(v1_host->kind == serve::TagAnswer::Kind::no_match);
  CHECK(v1_host->reason.starts_with("hwimg: no variant of registry.example.org/other:1 runs on this node: "));
}

TEST_CASE("--foreign select: a CUDA image whose NVIDIA_REQUIRE_CUDA the node fails is refused, one that fits passes") {
  image::MemoryReader memory{"registry.example.org/cuda-app"};
  const auto image = test::put_image(memory, {"linux", "amd64", ""}, {"NVIDIA_REQUIRE_CUDA=cuda>=12.8"});
  const auto document = document_of(memory, image);
  const auto old_driver = select_test::with_gpus(select_test::cpu_host("x86-64-v3"), "535.183.01", "12.2", {"9.0"});
  const auto refused = serve::answer_tag(document, "registry.example.org/cuda-app:1", memory, old_driver, {},
                                         serve::ForeignImages::select);
  REQUIRE_MESSAGE(refused.has_value(), refused.error().message);
  CHECK(refused->kind == serve::TagAnswer::Kind::no_match);
  CHECK(refused->reason.find("cuda>=12.8") != std::string::npos);
  const auto new_driver = select_test::with_gpus(select_test::cpu_host("x86-64-v3"), "570.195.03", "12.8", {"9.0"});
  const auto fits = serve::answer_tag(document, "x", memory, new_driver, {}, serve::ForeignImages::select);
  REQUIRE(fits);
  CHECK(fits->kind == serve::TagAnswer::Kind::unchanged);
  CHECK(fits->digest == image.digest);
  // Passed through untouched without --foreign select, whatever the driver.
  CHECK(serve::answer_tag(document, "x", memory, old_driver, {})->kind == serve::TagAnswer::Kind::unchanged);
}
