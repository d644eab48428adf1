#include <doctest/doctest.h>

#include "hwimg/build/index_create.hpp"

using namespace hwimg;
using namespace hwimg::build;

namespace {

// A variant manifest and config as `hwimg build` writes them (labels and manifest annotations).
VariantSource variant(const std::string& id, const std::string& platform_variant, const std::string& level,
                      const std::string& title = "stencil") {
  oci::ImageConfig config;
  config.os = "linux";
  config.architecture = "amd64";
  config.variant = platform_variant;
  config.labels = {{"org.hwimg.variant", id},
                   {"org.hwimg.cpu.level", level},
                   {"org.opencontainers.image.source", "https://example.org/stencil"}};
  const auto config_json = oci::to_json(config);
  oci::Manifest manifest;
  manifest.config = {std::string(oci::media_type::config), oci::Digest::sha256_of(config_json),
                     static_cast<std::int64_t>(config_json.size()), std::nullopt, {}};
  manifest.annotations = {{"org.hwimg.variant", id},
                          {"org.hwimg.cpu.level", level},
                          {"org.opencontainers.image.created", "2023-11-14T22:13:20Z"},
                          {"org.opencontainers.image.title", title},
                          {"org.opencontainers.image.base.name", "oci:base:1"}};
  auto bytes = oci::to_json(manifest);
  const auto digest = oci::Digest::sha256_of(bytes);
  return {"reg/app:1-" + id, {std::move(bytes), std::string(oci::media_type::manifest), digest}, config_json};
}

}  // namespace

TEST_CASE("the index lists each variant in order with its platform and org.hwimg pairs") {
  const std::vector sources{variant("cpu-x86-64-v1", "", "x86-64"), variant("cpu-x86-64-v3", "v3", "x86-64-v3")};
  const auto index = assemble_index(sources);
  REQUIRE(index);
  REQUIRE(index->manifests.size() == 2);
  const auto& first = index->manifests[0];
  CHECK(first.media_type == oci::media_type::manifest);
  CHECK(first.digest == sources[0].manifest.digest);
  CHECK(first.size == static_cast<std::int64_t>(sources[0].manifest.bytes.size()));
  CHECK(first.platform == oci::Platform{"linux", "amd64", ""});
  CHECK(first.annotations == oci::Annotations{{"org.hwimg.variant", "cpu-x86-64-v1"}, {"org.hwimg.cpu.level", "x86-64"}});
  CHECK(index->manifests[1].platform == oci::Platform{"linux", "amd64", "v3"});
  CHECK(index->manifests[1].annotation("org.hwimg.variant") == "cpu-x86-64-v3");
  // The recipe's annotations and the creation time, not the per-variant or base-image ones.
  CHECK(index->annotations == oci::Annotations{{"org.opencontainers.image.created", "2023-11-14T22:13:20Z"},
                                               {"org.opencontainers.image.title", "stencil"}});
}

TEST_CASE("an annotation the variants disagree on is left off the index") {
  const auto index = assemble_index({variant("a", "", "x86-64", "one"), variant("b", "v2", "x86-64-v2", "two")});
  REQUIRE(index);
  CHECK(index->annotations == oci::Annotations{{"org.opencontainers.image.created", "2023-11-14T22:13:20Z"}});
}

TEST_CASE("config labels stand in when the manifest carries no org.hwimg annotations") {
  auto source = variant("cpu-x86-64-v2", "v2", "x86-64-v2");
  auto manifest = *oci::parse_manifest(source.manifest.bytes);
  manifest.annotations.clear();
  source.manifest.bytes = oci::to_json(manifest);
  source.manifest.digest = oci::Digest::sha256_of(source.manifest.bytes);
  const auto index = assemble_index({source});
  REQUIRE(index);
  CHECK(index->manifests[0].annotations ==
        oci::Annotations{{"org.hwimg.variant", "cpu-x86-64-v2"}, {"org.hwimg.cpu.level", "x86-64-v2"}});
  CHECK(index->annotations.empty());
}

TEST_CASE("bad sources are refused, naming the reference") {
  SUBCASE("an index") {
    auto source = variant("a", "", "x86-64");
    source.manifest.media_type = std::string(oci::media_type::index);
    CHECK(assemble_index({source}).error().message ==
          "failed to create the index: reg/app:1-a is an image index, not a variant manifest (name one variant's tag "
          "or digest)");
  }
  SUBCASE("no variant label") {
    auto source = variant("a", "", "x86-64");
    auto manifest = *oci::parse_manifest(source.manifest.bytes);
    manifest.annotations.clear();
    source.manifest.bytes = oci::to_json(manifest);
    source.config = R"({"architecture":"amd64","os":"linux","config":{"Labels":{"maintainer":"x"}},)"
                    R"("rootfs":{"type":"layers","diff_ids":[]}})";
    CHECK(assemble_index({source}).error().message ==
          "failed to create the index: reg/app:1-a has no org.hwimg.variant label: it was not built by hwimg build "
          "(or names no variant)");
  }
  SUBCASE("a variant twice") {
    auto again = variant("a", "", "x86-64");
    again.reference = "reg/app@" + again.manifest.digest.str();
    CHECK(assemble_index({variant("a", "", "x86-64"), again}).error().message ==
          "failed to create the index: variant \"a\" is in both reg/app:1-a and " + again.reference);
  }
  SUBCASE("nothing") {
    const auto result = assemble_index({});
    CHECK(result.error().message == "failed to create the index: no --from variant");
    CHECK(result.error().exit_code == ExitCode::usage);
  }
}
