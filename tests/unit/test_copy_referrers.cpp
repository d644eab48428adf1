#include <doctest/doctest.h>

#include "hwimg/copy/layout_destination.hpp"
#include "hwimg/image/memory_reader.hpp"
#include "hwimg/oci/layout_referrers.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

using namespace hwimg;

namespace {

constexpr std::string_view nfd_type = "application/vnd.nfd.image-compatibility.v1alpha1";

// An artifact manifest whose subject is `subject`, its config and one layer stored in `store`.
template <typename Store>
std::string put_artifact(Store& store, const oci::Descriptor& subject, const std::string& spec,
                         oci::Annotations annotations = {}) {
  oci::Manifest manifest;
  manifest.artifact_type = std::string(nfd_type);
  manifest.config = test::put_blob(store, "{}", "application/vnd.oci.empty.v1+json");
  manifest.layers = {test::put_blob(store, spec, "application/vnd.nfd.image-compatibility.spec.v1alpha1+yaml")};
  manifest.subject = oci::Descriptor{std::string(oci::media_type::manifest), subject.digest, subject.size, {}, {}, {}};
  manifest.annotations = std::move(annotations);
  return oci::to_json(manifest);
}

void list_untagged(const oci::Layout& layout, const oci::Descriptor& descriptor) {
  const auto updated = layout.update_index_json([&](oci::Index& index) -> Result<void> {
    index.manifests.push_back(descriptor);
    return {};
  });
  REQUIRE_MESSAGE(updated.has_value(), updated.error().message);
}

}  // namespace

TEST_CASE("a layout's referrers are the manifests index.json lists whose subject is asked for") {
  const auto tmp = test::scratch_directory();
  const auto layout = oci::Layout::open(tmp.path(), oci::OpenMode::create).value();
  const auto kept = test::put_image(layout, {"linux", "amd64", ""});
  const auto dropped = test::put_image(layout, {"linux", "amd64", "v3"});
  test::tag_in_layout(layout, test::put_index(layout, {kept, dropped}), "v1");
  test::tag_in_layout(layout, kept, "v1-kept");
  test::tag_in_layout(layout, dropped, "v1-dropped");
  const auto of_kept = put_artifact(layout, kept, "kept: true\n");
  const auto of_dropped = put_artifact(layout, dropped, "dropped: true\n");
  const auto unlisted = put_artifact(layout, kept, "unlisted: true\n");  // a blob only: not a referrer
  list_untagged(layout, test::put_blob(layout, of_kept, oci::media_type::manifest));
  list_untagged(layout, test::put_blob(layout, of_kept, oci::media_type::manifest));  // listed twice: read once
  test::tag_in_layout(layout, test::put_blob(layout, of_dropped, oci::media_type::manifest), "signature");

  CHECK(oci::layout_referrers(layout, {kept.digest}).value() == std::vector<std::string>{of_kept});
  CHECK(oci::layout_referrers(layout, {kept.digest, dropped.digest}).value() ==
        std::vector<std::string>{of_kept, of_dropped});
  CHECK(oci::layout_referrers(layout, {}).value().empty());
  (void)unlisted;

  test::write_file(layout.blob_path(oci::Digest::sha256_of(of_kept)), of_dropped);
  CHECK(oci::layout_referrers(layout, {kept.digest}).error().message.starts_with(
      "failed to find the referrers in " + tmp.path().string() + ": failed to read blob "));
}

TEST_CASE("referrers copied into a layout are listed untagged, once; a rerun leaves index.json byte-identical") {
  const auto tmp = test::scratch_directory();
  image::OpenedImage source;
  auto memory = std::make_unique<image::MemoryReader>();
  const auto variant = test::put_image(*memory, {"linux", "amd64", ""});
  const auto index = test::put_index(*memory, {variant});
  const auto artifact = put_artifact(*memory, variant, "spec: 1\n",
                                     {{"org.opencontainers.image.created", "2026-01-01T00:00:00Z"},
                                      {std::string(oci::ref_name_annotation), "not-a-tag"}});
  registry::PushPlan plan;
  plan.root = {index, memory->read(index).value(), "v1"};
  REQUIRE(plan.add_manifest({variant, memory->read(variant).value(), "v1-base"}));
  REQUIRE(plan.add_referrer(artifact));
  plan.order_blobs();
  source.reader = std::move(memory);
  registry::ClientOptions options;
  options.jobs = 1;

  copy::CopySummary first;
  REQUIRE(copy::write_to_layout(source, options, plan, tmp.path() / "out", first));
  CHECK(first.blobs_copied == 3);  // the image's config, the artifact's config and spec layer
  const auto written = util::read_file(tmp.path() / "out" / "index.json").value();
  const auto index_json = oci::parse_index(written).value();
  REQUIRE(index_json.manifests.size() == 3);
  const auto& listed = index_json.manifests[0];
  CHECK(listed.digest == oci::Digest::sha256_of(artifact));
  CHECK(listed.artifact_type == nfd_type);
  CHECK(listed.annotations == oci::Annotations{{"org.opencontainers.image.created", "2026-01-01T00:00:00Z"}});
  CHECK(index_json.manifests[1].ref_name() == "v1");
  CHECK(index_json.manifests[2].ref_name() == "v1-base");
  const auto layout = oci::Layout::open(tmp.path() / "out").value();
  CHECK(layout.read_blob(listed).value() == artifact);

  copy::CopySummary again;
  REQUIRE(copy::write_to_layout(source, options, plan, tmp.path() / "out", again));
  CHECK(again.blobs_copied == 0);
  CHECK(util::read_file(tmp.path() / "out" / "index.json").value() == written);
}
