#include <doctest/doctest.h>

#include "hwimg/oci/documents.hpp"

using namespace hwimg::oci;

TEST_CASE("documents serialise canonically and parse back") {
  Manifest m;
  m.config = {std::string(media_type::config), Digest::sha256_of("c"), 1, {}, {}};
  m.layers.push_back({std::string(media_type::layer_gzip), Digest::sha256_of("l"), 10, {}, {}});
  m.annotations["org.hwimg.variant"] = "cpu-x86-64-v1";
  const auto text = to_json(m);
  CHECK(text.starts_with(R"({"annotations":{"org.hwimg.variant":"cpu-x86-64-v1"},"config":{)"));
  const auto parsed = parse_manifest(text);
  REQUIRE(parsed);
  CHECK(parsed->layers == m.layers);
  CHECK(to_json(*parsed) == text);

  Index index;
  Descriptor d{std::string(media_type::manifest), Digest::sha256_of("m"), 5, Platform{"linux", "amd64", "v3"}, {}};
  index.manifests.push_back(d);
  const auto back = parse_index(to_json(index));
  REQUIRE(back);
  CHECK(back->manifests.front().platform->str() == "linux/amd64/v3");
}

TEST_CASE("document errors name the field") {
  CHECK(parse_index("[").error().message == "failed to parse image index: invalid JSON");
  CHECK(parse_index(R"({"manifests":[{"mediaType":"x","digest":"sha256:00","size":1}]})").error().message ==
        "failed to parse image index: index.manifests[0].digest: failed to parse digest \"sha256:00\": expected 64 "
        "hex digits, got 2");
  CHECK(parse_index(R"({"manifests":{}})").error().message ==
        "failed to parse image index: index.manifests: expected an array, got object");
  CHECK(parse_manifest(R"({"mediaType":"application/vnd.oci.image.index.v1+json","config":{}})").error().message.find(
            "is not an image manifest type") != std::string::npos);
  CHECK(parse_image_config(R"({"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]},"config":{"Env":"x"}})")
            .error()
            .message == "failed to parse image config: config.config.Env: expected an array, got string");
}

TEST_CASE("image config keeps env order and replaces by name") {
  ImageConfig c;
  c.set_env("PATH", "/bin");
  c.set_env("A", "1");
  c.set_env("PATH", "/usr/bin");
  CHECK(c.env == std::vector<std::string>{"PATH=/usr/bin", "A=1"});
  CHECK(c.env_value("A") == "1");
  CHECK_FALSE(c.env_value("B"));
}

TEST_CASE("image config history: empty_layer of another type is an error naming it, not an exception") {
  const auto good = parse_image_config(
      R"({"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]},)"
      R"("history":[{"created_by":"a","empty_layer":true},{"created_by":"b"}]})");
  REQUIRE_MESSAGE(good, good.error().message);
  REQUIRE(good->history.size() == 2);
  CHECK(good->history[0].empty_layer);
  CHECK_FALSE(good->history[1].empty_layer);
  const auto bad = parse_image_config(
      R"({"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]},)"
      R"("history":[{"created_by":"a","empty_layer":"yes"}]})");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("config.history[].empty_layer: expected true or false") != std::string::npos);
}
