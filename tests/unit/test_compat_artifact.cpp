#include <doctest/doctest.h>

#include "hwimg/compat/artifact.hpp"
#include "hwimg/compat/nfd_spec.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/referrers.hpp"

using namespace hwimg;

TEST_CASE("the artifact manifest: NFD's artifactType, the empty config, one YAML layer, the variant as subject") {
  const oci::Descriptor subject{std::string(oci::media_type::manifest), oci::Digest::sha256_of("variant"), 1234,
                                oci::Platform{"linux", "amd64", "v3"}, {{"org.hwimg.variant", "cpu-x86-64-v3"}}};
  const std::string yaml = "version: v1alpha1\ncompatibilities: []\n";
  const auto bytes = compat::artifact_manifest(subject, yaml);
  CHECK(compat::artifact_manifest(subject, yaml) == bytes);
  const auto manifest = oci::parse_manifest(bytes);
  REQUIRE(manifest);
  CHECK(manifest->media_type == oci::media_type::manifest);
  CHECK(manifest->artifact_type == "application/vnd.nfd.image-compatibility.v1alpha1");
  CHECK(manifest->config.media_type == "application/vnd.oci.empty.v1+json");
  CHECK(manifest->config.digest.str() == "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  CHECK(manifest->config.size == 2);
  REQUIRE(manifest->layers.size() == 1);
  CHECK(manifest->layers[0].media_type == "application/vnd.nfd.image-compatibility.spec.v1alpha1+yaml");
  CHECK(manifest->layers[0].digest == oci::Digest::sha256_of(yaml));
  CHECK(manifest->layers[0].size == static_cast<std::int64_t>(yaml.size()));
  REQUIRE(manifest->subject);
  CHECK(manifest->subject->media_type == oci::media_type::manifest);
  CHECK(manifest->subject->digest == subject.digest);
  CHECK(manifest->subject->size == 1234);
  CHECK_FALSE(manifest->subject->platform);
  CHECK(manifest->subject->annotations.empty());
  CHECK(manifest->annotations.empty());  // no creation time: the same spec gives the same digest
  CHECK(oci::to_json(*manifest) == bytes);
}

TEST_CASE("the referrers tag schema names a digest sha256-<hex>") {
  const auto digest = oci::Digest::sha256_of("variant");
  CHECK(registry::referrers_tag(digest) == "sha256-" + digest.hex());
  CHECK(registry::validate_registry_tag(registry::referrers_tag(digest)));
}

TEST_CASE("plan_artifacts adds one referrer per described variant, its blobs held in memory") {
  registry::PushPlan plan;
  oci::Descriptor described{std::string(oci::media_type::manifest), oci::Digest::sha256_of("v3"), 10,
                            oci::Platform{"linux", "amd64", "v3"},
                            {{"org.hwimg.variant", "cpu-x86-64-v3"}, {"org.hwimg.cpu.level", "x86-64-v3"}}};
  oci::Descriptor foreign{std::string(oci::media_type::manifest), oci::Digest::sha256_of("arm"), 10,
                          oci::Platform{"linux", "arm64", ""}, {}};
  plan.manifests.push_back({described, "{}", "1.0-cpu-x86-64-v3"});
  plan.manifests.push_back({foreign, "{}", ""});
  plan.root = {{std::string(oci::media_type::index), oci::Digest::sha256_of("index"), 5, {}, {}}, "{}", "1.0"};

  const auto added = compat::plan_artifacts(plan);
  REQUIRE(added);
  CHECK(*added == 1);
  REQUIRE(plan.referrers.size() == 1);
  const auto& referrer = plan.referrers[0];
  CHECK(referrer.tag.empty());
  CHECK(referrer.descriptor.artifact_type == compat::nfd_artifact_type);
  CHECK(referrer.descriptor.digest == oci::Digest::sha256_of(referrer.bytes));
  const auto manifest = oci::parse_manifest(referrer.bytes);
  REQUIRE(manifest);
  REQUIRE(manifest->subject);
  CHECK(manifest->subject->digest == described.digest);
  // The config and the spec are pushed from memory, as blobs of the plan.
  CHECK(plan.inline_blobs.at(manifest->config.digest) == compat::empty_config);
  const auto& yaml = plan.inline_blobs.at(manifest->layers[0].digest);
  CHECK(yaml.find("x86-64-v3") != std::string::npos);
  CHECK(plan.blobs.size() == 2);
}

TEST_CASE("a single manifest is described from its own annotations") {
  registry::PushPlan plan;
  oci::Manifest manifest;
  manifest.config = {std::string(oci::media_type::config), oci::Digest::sha256_of("c"), 1, {}, {}};
  manifest.annotations = {{"org.hwimg.variant", "cpu-x86-64-v2"}, {"org.hwimg.cpu.level", "x86-64-v2"}};
  const auto bytes = oci::to_json(manifest);
  plan.root = {{std::string(oci::media_type::manifest), oci::Digest::sha256_of(bytes),
                static_cast<std::int64_t>(bytes.size()), {}, {}},
               bytes, "1.0"};
  const auto added = compat::plan_artifacts(plan);
  REQUIRE(added);
  CHECK(*added == 1);
  REQUIRE(plan.referrers.size() == 1);
  CHECK(oci::parse_manifest(plan.referrers[0].bytes)->subject->digest == plan.root.descriptor.digest);
}
