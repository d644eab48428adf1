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
