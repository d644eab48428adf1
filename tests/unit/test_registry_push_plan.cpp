#include <doctest/doctest.h>

#include <filesystem>

#include "hwimg/oci/layout.hpp"
#include "hwimg/registry/detail/blob_locations.hpp"
#include "hwimg/registry/push_plan.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

using namespace hwimg;
using namespace hwimg::registry;

namespace {

oci::Descriptor with_ref_name(oci::Descriptor d, const std::string& name) {
  d.annotations[std::string(oci::ref_name_annotation)] = name;
  return d;
}

// Three variants sharing one large layer, each with its own config and small layer.
oci::Descriptor write_variants(const oci::Layout& layout, const std::string& tag) {
  const auto shared = layout.put_blob(std::string(4096, 's'), oci::media_type::layer_gzip).value();
  oci::Index index;
  std::vector<oci::Descriptor> tagged;
  for (const std::string id : {"a", "b", "c"}) {
    oci::Manifest manifest;
    manifest.config = layout.put_blob("{\"variant\":\"" + id + "\"}", oci::media_type::config).value();
    manifest.layers = {shared, layout.put_blob("own layer " + id, oci::media_type::layer_gzip).value()};
    auto descriptor = layout.put_blob(oci::to_json(manifest), oci::media_type::manifest).value();
    index.manifests.push_back(descriptor);
    tagged.push_back(with_ref_name(descriptor, tag + "-" + id));
  }
  const auto root = layout.put_blob(oci::to_json(index), oci::media_type::index).value();
  REQUIRE(layout.update_index_json([&](oci::Index& top) -> Result<void> {
    top.manifests = tagged;
    top.manifests.insert(top.manifests.begin(), with_ref_name(root, tag));
    return {};
  }));
  return root;
}

}  // namespace

TEST_CASE("a push plan has every blob once, largest first, and the variant tags renamed") {
  auto dir = test::scratch_directory("hwimg-plan");
  auto layout = oci::Layout::open(dir.path(), oci::OpenMode::create);
  REQUIRE(layout);
  const auto root = write_variants(*layout, "1.0");
  auto plan = plan_push(dir.path(), "1.0", "stable");
  REQUIRE_MESSAGE(plan, plan.error().message);
  CHECK(plan->root.descriptor.digest == root.digest);
  CHECK(plan->root.tag == "stable");
  CHECK(plan->blobs.size() == 7);  // one shared layer, three configs, three own layers
  CHECK(plan->blobs.front().size == 4096);
  for (std::size_t i = 1; i < plan->blobs.size(); ++i) CHECK(plan->blobs[i - 1].size >= plan->blobs[i].size);
  REQUIRE(plan->manifests.size() == 3);
  CHECK(plan->manifests[0].tag == "stable-a");
  CHECK(plan->manifests[2].tag == "stable-c");
}

TEST_CASE("a push plan refuses what a registry would not take") {
  auto dir = test::scratch_directory("hwimg-plan");
  auto layout = oci::Layout::open(dir.path(), oci::OpenMode::create);
  REQUIRE(layout);
  const auto root = write_variants(*layout, "1.0");

  auto bad_tag = plan_push(dir.path(), "1.0", "a+b");
  REQUIRE(!bad_tag);
  CHECK(bad_tag.error().message ==
        "failed to plan the push: invalid tag \"a+b-a\": character '+' is not allowed");

  oci::Index nested;
  nested.manifests = {root};
  const auto outer = layout->put_blob(oci::to_json(nested), oci::media_type::index).value();
  REQUIRE(layout->update_index_json([&](oci::Index& top) -> Result<void> {
    top.manifests.push_back(with_ref_name(outer, "nested"));
    return {};
  }));
  auto refused = plan_push(dir.path(), "nested", "nested");
  REQUIRE(!refused);
  CHECK(refused.error().message ==
        fmt::format("failed to plan the push of {}: index entry {} has media type \"{}\" (nested indexes are not "
                    "supported)", dir.path().string(), root.digest.str(), oci::media_type::index));

  std::filesystem::remove(layout->blob_path(oci::Digest::sha256_of("own layer b")));
  auto missing = plan_push(dir.path(), "1.0", "1.0");
  REQUIRE(!missing);
  CHECK(missing.error().message == fmt::format("failed to plan the push of {}: blob {} is missing from the layout",
                                               dir.path().string(), oci::Digest::sha256_of("own layer b").str()));
}

TEST_CASE("blob locations remember other repositories across saves") {
  auto dir = test::scratch_directory("hwimg-plan");
  const auto file = dir.path() / "state" / "registry-blobs.json";
  const auto digest = oci::Digest::sha256_of("blob");
  auto first = BlobLocations::load(file);
  CHECK(!first.other_repository("r:5000", digest, "a/x"));
  first.record("r:5000", digest, "a/x");
  REQUIRE(first.save());
  auto second = BlobLocations::load(file);
  CHECK(!second.other_repository("r:5000", digest, "a/x"));
  CHECK(second.other_repository("r:5000", digest, "b/y") == "a/x");
  CHECK(!second.other_repository("other:5000", digest, "b/y"));
  second.record("r:5000", digest, "b/y");
  REQUIRE(second.save());
  CHECK(BlobLocations::load(file).other_repository("r:5000", digest, "a/x") == "b/y");
  test::write_file(file, "not json");
  CHECK(!BlobLocations::load(file).other_repository("r:5000", digest, "c/z"));
}

TEST_CASE("a referrer needs a subject; its descriptor carries the artifactType, else the config's type") {
  PushPlan plan;
  oci::Manifest artifact;
  artifact.artifact_type = "application/vnd.example.sbom";
  artifact.config = {std::string(oci::media_type::empty), oci::Digest::sha256_of("{}"), 2, {}, {}};
  artifact.layers = {{"text/spdx", oci::Digest::sha256_of("sbom"), 4, {}, {}}};
  artifact.annotations = {{"org.example.kind", "sbom"}};
  artifact.subject = oci::Descriptor{std::string(oci::media_type::manifest), oci::Digest::sha256_of("x"), 1, {}, {}};
  REQUIRE(plan.add_referrer(oci::to_json(artifact)));
  REQUIRE(plan.referrers.size() == 1);
  CHECK(plan.referrers[0].descriptor.artifact_type == "application/vnd.example.sbom");
  CHECK(plan.referrers[0].descriptor.annotations.at("org.example.kind") == "sbom");
  CHECK(plan.blobs.size() == 2);

  auto signature = artifact;
  signature.artifact_type.clear();
  signature.config.media_type = "application/vnd.example.signature.config";
  REQUIRE(plan.add_referrer(oci::to_json(signature)));
  CHECK(plan.referrers[1].descriptor.artifact_type == "application/vnd.example.signature.config");
  CHECK(plan.blobs.size() == 2);  // the same blobs, once

  auto orphan = artifact;
  orphan.subject.reset();
  const auto refused = plan.add_referrer(oci::to_json(orphan));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("has no subject") != std::string::npos);
}

TEST_CASE("a push plan takes along the referrers the layout lists for its manifests, each once") {
  auto dir = test::scratch_directory("hwimg-plan");
  auto layout = oci::Layout::open(dir.path(), oci::OpenMode::create);
  REQUIRE(layout);
  const auto root = write_variants(*layout, "1.0");
  const auto variant = oci::parse_index(layout->read_blob(root).value()).value().manifests[1];
  const auto referrer_of = [&](const oci::Descriptor& subject, const std::string& payload) {
    oci::Manifest artifact;
    artifact.artifact_type = "application/vnd.example.signature";
    artifact.config = layout->put_blob("{}", oci::media_type::empty).value();
    artifact.layers = {layout->put_blob(payload, "application/octet-stream").value()};
    artifact.subject = oci::Descriptor{subject.media_type, subject.digest, subject.size, {}, {}};
    auto d = layout->put_blob(oci::to_json(artifact), oci::media_type::manifest).value();
    d.artifact_type = artifact.artifact_type;
    return d;
  };
  const auto signature = referrer_of(variant, "signature of b");
  const auto elsewhere = referrer_of(oci::Descriptor{std::string(oci::media_type::manifest),
                                                     oci::Digest::sha256_of("not in this image"), 3, {}, {}},
                                     "signature of something else");
  REQUIRE(layout->update_index_json([&](oci::Index& top) -> Result<void> {
    top.manifests.push_back(signature);
    top.manifests.push_back(elsewhere);
    top.manifests.push_back(signature);  // listed twice, taken once
    return {};
  }));
  auto plan = plan_push(dir.path(), "1.0", "1.0");
  REQUIRE_MESSAGE(plan, plan.error().message);
  REQUIRE(plan->referrers.size() == 1);
  CHECK(plan->referrers[0].descriptor.digest == signature.digest);
  CHECK(plan->referrers[0].descriptor.artifact_type == "application/vnd.example.signature");
  CHECK(plan->blobs.size() == 9);  // the image's seven, the signature's config and payload
}

TEST_CASE("a push plan from documents read elsewhere (a copy): the root last, the variants with their tags") {
  oci::Manifest manifest;
  manifest.config = {std::string(oci::media_type::config), oci::Digest::sha256_of("config"), 6, {}, {}, {}};
  manifest.layers = {{std::string(oci::media_type::layer_gzip), oci::Digest::sha256_of("layer"), 5, {}, {}, {}}};
  const auto manifest_bytes = oci::to_json(manifest);
  const oci::Descriptor variant{std::string(oci::media_type::manifest), oci::Digest::sha256_of(manifest_bytes),
                                static_cast<std::int64_t>(manifest_bytes.size()), {}, {}, {}};
  oci::Index index;
  index.manifests = {variant};
  const auto index_bytes = oci::to_json(index);
  const oci::Descriptor root{std::string(oci::media_type::index), oci::Digest::sha256_of(index_bytes),
                             static_cast<std::int64_t>(index_bytes.size()), {}, {}, {}};

  SUBCASE("an index and its variants") {
    auto plan = PushPlan::from_documents("copy src", {root, index_bytes, "1.0"}, {{variant, manifest_bytes, "1.0-a"}});
    REQUIRE_MESSAGE(plan, plan.error().message);
    CHECK(plan->root.tag == "1.0");
    CHECK(plan->root.descriptor.digest == root.digest);
    REQUIRE(plan->manifests.size() == 1);
    CHECK(plan->manifests[0].tag == "1.0-a");
    CHECK(plan->blobs.size() == 2);
  }
  SUBCASE("a single image: the root is the manifest, no variants") {
    auto plan = PushPlan::from_documents("copy src", {variant, manifest_bytes, "1.0"}, {});
    REQUIRE_MESSAGE(plan, plan.error().message);
    CHECK(plan->root.tag == "1.0");
    CHECK(plan->manifests.empty());
    CHECK(plan->blobs.size() == 2);
  }
  SUBCASE("a nested index is refused, saying what was being done") {
    oci::Index outer;
    outer.manifests = {root};
    const auto outer_bytes = oci::to_json(outer);
    const oci::Descriptor outer_root{std::string(oci::media_type::index), oci::Digest::sha256_of(outer_bytes),
                                     static_cast<std::int64_t>(outer_bytes.size()), {}, {}, {}};
    const auto plan = PushPlan::from_documents("copy src", {outer_root, outer_bytes, "1.0"}, {});
    REQUIRE_FALSE(plan);
    CHECK(plan.error().message ==
          fmt::format("failed to copy src: index entry {} has media type \"{}\" (nested indexes are not supported)",
                      root.digest.str(), oci::media_type::index));
  }
}
