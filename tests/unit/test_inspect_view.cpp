// `hwimg inspect`: each variant's tags, its config summary, sizes marked compressed, and the
// referrers attached to the index and each variant (issue 25).

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "hwimg/image/memory_reader.hpp"
#include "hwimg/inspect/config_summary.hpp"
#include "hwimg/inspect/inspect.hpp"
#include "hwimg/inspect/variant_tags.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/oci/media_types.hpp"
#include "test_support.hpp"

using namespace hwimg;

namespace {

// An NFD-style artifact whose subject is `subject`, stored in `memory`.
oci::Descriptor put_referrer(image::MemoryReader& memory, const oci::Descriptor& subject, std::string artifact_type) {
  oci::Manifest manifest;
  manifest.artifact_type = std::move(artifact_type);
  manifest.config = memory.add("{}", oci::media_type::empty);
  manifest.subject = oci::Descriptor{std::string(oci::media_type::manifest), subject.digest, subject.size, {}, {}, {}};
  return memory.add(oci::to_json(manifest), oci::media_type::manifest);
}

}  // namespace

TEST_CASE("a variant's tags: by digest where the listing tells, else the build's TAG-<variant id>") {
  const auto a = oci::Digest::sha256_of("a");
  const auto b = oci::Digest::sha256_of("b");
  const std::vector<image::ListedTag> layout{{"1.0", b}, {"1.0-cpu-zen4", a}, {"old", a}, {"1.0-cpu-x86-64-v2", b}};
  CHECK(inspect::variant_tags(layout, a, "1.0", "cpu-zen4") == std::vector<std::string>{"1.0-cpu-zen4", "old"});
  // A layout's tag that names another manifest is not this variant's, whatever its name.
  CHECK(inspect::variant_tags(layout, a, "1.0", "cpu-x86-64-v2") == std::vector<std::string>{"1.0-cpu-zen4", "old"});

  const std::vector<image::ListedTag> registry{{"1.0", std::nullopt}, {"1.0-cpu-zen4", std::nullopt}, {"old", std::nullopt}};
  CHECK(inspect::variant_tags(registry, a, "1.0", "cpu-zen4") == std::vector<std::string>{"1.0-cpu-zen4"});
  CHECK(inspect::variant_tags(registry, a, "1.0", "cpu-x86-64-v2").empty());
  CHECK(inspect::variant_tags(registry, a, "", "cpu-zen4").empty());
  CHECK(inspect::variant_tags(registry, a, "1.0", std::nullopt).empty());
}

TEST_CASE("the config summary: how it starts, who runs it, when it was made, the env a node acts on, labels") {
  oci::ImageConfig config;
  config.entrypoint = std::vector<std::string>{"/opt/stencil/bin/stencil"};
  config.working_dir = "/data";
  config.created = "2023-11-14T22:13:20Z";
  config.env = {"PATH=/usr/bin", "HWIMG_VARIANT=cpu-zen4", "NVIDIA_REQUIRE_CUDA=cuda>=12.8", "LANG=C.UTF-8",
                "CUDA_VERSION=12.8.0"};
  config.labels = {{"org.opencontainers.image.source", "https://example.org/stencil"}};
  CHECK(inspect::config_lines(config) ==
        std::vector<std::string>{
            "config entrypoint [\"/opt/stencil/bin/stencil\"], workdir /data, user root (none set), created "
            "2023-11-14T22:13:20Z",
            "env HWIMG_VARIANT=cpu-zen4", "env NVIDIA_REQUIRE_CUDA=cuda>=12.8", "env CUDA_VERSION=12.8.0",
            "env 2 more: PATH, LANG", "label org.opencontainers.image.source = https://example.org/stencil"});

  oci::ImageConfig bare;
  bare.user = "1000:1000";
  bare.cmd = std::vector<std::string>{"sh", "-c", "echo \"hi\""};
  bare.env = {"PATH=/usr/bin"};
  CHECK(inspect::config_lines(bare) ==
        std::vector<std::string>{R"(config cmd ["sh","-c","echo \"hi\""], user 1000:1000)", "env 1 set: PATH"});
  const oci::Annotations annotations{{"org.hwimg.cpu.level", "x86-64-v3"}};
  oci::ImageConfig labelled;
  labelled.labels = {{"org.hwimg.cpu.level", "x86-64-v3"}, {"org.hwimg.variant", "cpu-x86-64-v3"}};
  CHECK(inspect::config_lines(labelled, annotations).back() == "label org.hwimg.variant = cpu-x86-64-v3");
  CHECK(inspect::config_lines(labelled, {{"org.hwimg.cpu.level", "x86-64-v4"}}).size() == 4);
  CHECK(inspect::config_lines(oci::ImageConfig{}) ==
        std::vector<std::string>{"config no entrypoint or cmd, user root (none set)", "env none"});
}

TEST_CASE("inspect shows each variant's tag, config, compressed sizes and referrers") {
  image::MemoryReader memory("oci:out");
  const auto layer = memory.add(std::string(3000, 'x'), oci::media_type::layer_gzip);
  const auto tagged = test::put_image(memory, {"linux", "amd64", "v4"}, {"HWIMG_VARIANT=cpu-zen4", "PATH=/bin"},
                                      {{std::string(oci::annotation::variant), "cpu-zen4"}}, {}, {layer});
  const auto untagged = test::put_image(memory, {"linux", "amd64", ""}, {}, {{std::string(oci::annotation::variant), "cpu-x86-64-v1"}});
  const auto index = test::put_index(memory, {tagged, untagged});
  memory.tag("1.0", index);
  memory.tag("1.0-cpu-zen4", tagged);
  const auto nfd = put_referrer(memory, tagged, "application/vnd.nfd.image-compatibility.v1alpha1");
  const auto signature = put_referrer(memory, index, "application/vnd.dev.cosign.artifact.sig.v1+json");

  const auto view = inspect::load_image_view("oci:out:1.0", "1.0", memory, index).value();
  const auto table = inspect::render(view, inspect::Format::table);
  CHECK(table.find("VARIANT                          PLATFORM           MANIFEST              LAYERS "
                   "SIZE (compressed)\n") != std::string::npos);
  CHECK(table.find("  referrer sha256:" + signature.digest.short_hex() +
                   " application/vnd.dev.cosign.artifact.sig.v1+json\n") != std::string::npos);
  const auto zen4 = table.find("cpu-zen4 ");
  const auto baseline = table.find("cpu-x86-64-v1 ");
  REQUIRE(zen4 != std::string::npos);
  REQUIRE(baseline != std::string::npos);
  CHECK(table.substr(zen4, baseline - zen4).ends_with(
      "      1           2.9 KiB\n"
      "    tag oci:out:1.0-cpu-zen4\n"
      "    config no entrypoint or cmd, user root (none set)\n"
      "    env HWIMG_VARIANT=cpu-zen4\n"
      "    env 1 more: PATH\n"
      "    layer sha256:" + layer.digest.short_hex() + "     2.9 KiB  application/vnd.oci.image.layer.v1.tar+gzip\n"
      "    referrer sha256:" + nfd.digest.short_hex() + " application/vnd.nfd.image-compatibility.v1alpha1\n"));
  CHECK(table.find("    no tag; by digest oci:out@" + untagged.digest.str() + "\n") != std::string::npos);
  CHECK(table.ends_with("\nsizes are the layers as stored and pulled (compressed); unpacked they take more room\n"));

  const auto json = nlohmann::json::parse(inspect::render(view, inspect::Format::json));
  CHECK(json["variants"][0]["tags"] == nlohmann::json::array({"1.0-cpu-zen4"}));
  CHECK(json["variants"][1]["tags"] == nlohmann::json::array());
  CHECK(json["variants"][0]["layersSize"] == 3000);
  CHECK(json["variants"][0]["imageConfig"]["env"] == nlohmann::json::array({"HWIMG_VARIANT=cpu-zen4", "PATH=/bin"}));
  CHECK(json["variants"][0]["imageConfig"]["entrypoint"].is_null());
  CHECK(json["variants"][0]["referrers"][0]["artifactType"] == "application/vnd.nfd.image-compatibility.v1alpha1");
  CHECK(json["variants"][0]["referrers"][0]["digest"] == nfd.digest.str());
  CHECK(json["referrers"][0]["artifactType"] == "application/vnd.dev.cosign.artifact.sig.v1+json");
  CHECK(json["notes"] == nlohmann::json::array());
}

TEST_CASE("inspect says when nothing is attached, and a lone manifest is named by the tag it was asked by") {
  image::MemoryReader memory("registry.example/app");
  const auto manifest = test::put_image(memory, {"linux", "amd64", ""});
  memory.tag("1.0-cpu-x86-64-v1", manifest);
  const auto view = inspect::load_image_view("registry.example/app:v1", "v1", memory, manifest).value();
  REQUIRE(view.variants.size() == 1);
  CHECK(view.variants[0].tags == std::vector<std::string>{"v1", "1.0-cpu-x86-64-v1"});
  const auto table = inspect::render(view, inspect::Format::table);
  CHECK(table.find("    tag registry.example/app:v1\n    tag registry.example/app:1.0-cpu-x86-64-v1\n") !=
        std::string::npos);
  CHECK(table.ends_with("no referrers (signatures, SBOMs, NFD compatibility artifacts) are attached\n"));
}
