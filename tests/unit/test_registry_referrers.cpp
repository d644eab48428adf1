#include <doctest/doctest.h>

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/referrers.hpp"

using namespace hwimg;

namespace {

oci::Descriptor artifact(std::string_view name) {
  oci::Descriptor d{std::string(oci::media_type::manifest), oci::Digest::sha256_of(name), 100, {}, {}};
  d.artifact_type = "application/vnd.example";
  return d;
}

}  // namespace

TEST_CASE("the referrers tag index lists each referrer once, in the order added") {
  oci::Index index;
  CHECK(registry::add_referrers(index, {artifact("a"), artifact("b")}));
  CHECK(index.media_type == oci::media_type::index);
  REQUIRE(index.manifests.size() == 2);
  CHECK(index.manifests[0].digest == artifact("a").digest);
  CHECK(index.manifests[1].artifact_type == "application/vnd.example");
  CHECK_FALSE(registry::add_referrers(index, {artifact("b"), artifact("a")}));
  CHECK(index.manifests.size() == 2);
  CHECK(registry::add_referrers(index, {artifact("a"), artifact("c")}));
  CHECK(index.manifests.size() == 3);
}

TEST_CASE("the referrers tag must hold an image index") {
  oci::Index index;
  index.media_type = std::string(oci::media_type::index);
  index.manifests.push_back(artifact("a"));
  const auto bytes = oci::to_json(index);
  const auto read = registry::read_referrers_index(std::string(oci::media_type::index) + "; charset=utf-8", bytes);
  REQUIRE(read);
  CHECK(read->manifests == index.manifests);

  const auto refused = registry::read_referrers_index(oci::media_type::manifest, "{}");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("not an image index") != std::string::npos);
  CHECK_FALSE(registry::read_referrers_index("", bytes));
}

TEST_CASE("referrers tags are told apart from others by their shape") {
  const auto digest = oci::Digest::sha256_of("variant");
  CHECK(registry::is_referrers_tag(registry::referrers_tag(digest)));
  CHECK(registry::is_referrers_tag("sha512-" + digest.hex()));  // another algorithm, cut to 64
  CHECK_FALSE(registry::is_referrers_tag("1.0-cpu-x86-64-v3"));
  CHECK_FALSE(registry::is_referrers_tag("sha256-" + digest.hex().substr(1)));  // 63 digits
  CHECK_FALSE(registry::is_referrers_tag("sha256-" + digest.hex() + "0"));
  CHECK_FALSE(registry::is_referrers_tag("SHA256-" + digest.hex()));
  CHECK_FALSE(registry::is_referrers_tag("-" + digest.hex()));
  CHECK_FALSE(registry::is_referrers_tag(std::string(33, 'a') + "-" + digest.hex()));
  CHECK_FALSE(registry::is_referrers_tag("latest"));
}
