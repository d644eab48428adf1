// write_index: the multi-variant index of a build and its tags TAG and TAG-<variant id> in
// index.json, replaced by a full build and merged by a partial one (--only).

#include <doctest/doctest.h>

#include <map>

#include "hwimg/build/builder.hpp"
#include "test_support.hpp"

using namespace hwimg;

namespace {

const oci::Annotations created{{"org.opencontainers.image.created", "2023-11-14T22:13:20Z"}};

struct Fixture {
  util::TempDir tmp = test::scratch_directory("hwimg-index-");
  oci::Layout layout = oci::Layout::open(tmp.path(), oci::OpenMode::create).value();

  // A variant as the builder returns it; `build` tells two builds of one id apart.
  build::BuiltVariant variant(const std::string& id, const std::string& platform_variant, int build = 1) const {
    const oci::Platform platform{"linux", "amd64", platform_variant};
    return {id,
            test::put_image(layout, platform, {"BUILD=" + std::to_string(build)}, {{"org.hwimg.variant", id}}),
            false};
  }

  oci::Descriptor write(const std::string& tag, const std::vector<build::BuiltVariant>& variants,
                        build::IndexMerge merge, const oci::Annotations& annotations = created) const {
    auto written = build::write_index(layout, tag, variants, annotations, merge);
    REQUIRE_MESSAGE(written.has_value(), written.error().message);
    return written->descriptor;
  }

  // tag -> digest of every tagged entry of index.json; fails on a tag listed twice.
  std::map<std::string, oci::Digest> tags() const {
    std::map<std::string, oci::Digest> out;
    const auto index_json = layout.read_index_json().value();
    for (const auto& d : index_json.manifests) {
      const auto name = d.ref_name();
      REQUIRE(name.has_value());
      CHECK_MESSAGE(!out.contains(*name), "tag listed twice: ", *name);
      out[*name] = d.digest;
    }
    return out;
  }

  oci::Index index(const oci::Descriptor& descriptor) const {
    return oci::parse_index(layout.read_blob(descriptor).value()).value();
  }
};

std::vector<std::string> ids(const oci::Index& index) {
  std::vector<std::string> out;
  for (const auto& d : index.manifests) out.push_back(d.annotation("org.hwimg.variant").value_or("?"));
  return out;
}

}  // namespace

TEST_CASE("the index lists the variants with platform and annotations, tagged TAG and TAG-<id>") {
  Fixture f;
  const auto v1 = f.variant("cpu-x86-64-v1", "");
  const auto v3 = f.variant("cpu-x86-64-v3", "v3");
  const auto written = f.write("1.0", {v1, v3}, build::IndexMerge::replace,
                               {{"org.opencontainers.image.title", "app"}});
  CHECK(written.media_type == oci::media_type::index);
  CHECK(f.layout.has_blob(written.digest));

  const auto index = f.index(written);
  CHECK(index.manifests == std::vector<oci::Descriptor>{v1.manifest, v3.manifest});
  CHECK(index.manifests[1].platform == oci::Platform{"linux", "amd64", "v3"});
  CHECK(index.annotations == oci::Annotations{{"org.opencontainers.image.title", "app"}});

  CHECK(f.tags() == std::map<std::string, oci::Digest>{{"1.0", written.digest},
                                                       {"1.0-cpu-x86-64-v1", v1.manifest.digest},
                                                       {"1.0-cpu-x86-64-v3", v3.manifest.digest}});
  CHECK(f.layout.resolve("1.0").value().digest == written.digest);
  // The variant tags keep the descriptor the index lists, so umoci and skopeo see its platform.
  CHECK(f.layout.resolve("1.0-cpu-x86-64-v3").value().platform == oci::Platform{"linux", "amd64", "v3"});

  // The same variants again: the same index, still one entry per tag.
  CHECK(f.write("1.0", {v1, v3}, build::IndexMerge::replace, {{"org.opencontainers.image.title", "app"}}) ==
        written);
  CHECK(f.tags().size() == 3);
}

TEST_CASE("a full build replaces the index: tags of variants no longer built are dropped") {
  Fixture f;
  f.write("1.0", {f.variant("a", ""), f.variant("b", "v2"), f.variant("c", "v3")}, build::IndexMerge::replace);
  const auto a2 = f.variant("a", "", 2);
  const auto written = f.write("1.0", {a2}, build::IndexMerge::replace);
  CHECK(ids(f.index(written)) == std::vector<std::string>{"a"});
  CHECK(f.tags() == std::map<std::string, oci::Digest>{{"1.0", written.digest}, {"1.0-a", a2.manifest.digest}});
}

TEST_CASE("a partial build keeps the other variants and replaces those of the same id in place") {
  Fixture f;
  const auto a = f.variant("a", "");
  const auto b = f.variant("b", "v2");
  const auto c = f.variant("c", "v3");
  f.write("1.0", {a, b, c}, build::IndexMerge::replace);

  const auto b2 = f.variant("b", "v2", 2);
  const auto d = f.variant("d", "v4");
  const auto written = f.write("1.0", {b2, d}, build::IndexMerge::keep_other_variants);
  const auto index = f.index(written);
  CHECK(ids(index) == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(index.manifests == std::vector<oci::Descriptor>{a.manifest, b2.manifest, c.manifest, d.manifest});
  CHECK(index.annotations == created);
  CHECK(f.tags() == std::map<std::string, oci::Digest>{{"1.0", written.digest},
                                                       {"1.0-a", a.manifest.digest},
                                                       {"1.0-b", b2.manifest.digest},
                                                       {"1.0-c", c.manifest.digest},
                                                       {"1.0-d", d.manifest.digest}});
}

TEST_CASE("other images of the layout keep their tags") {
  Fixture f;
  const auto a = f.variant("a", "");
  const auto first = f.write("1.0", {a}, build::IndexMerge::replace);
  const auto foreign = test::put_image(f.layout, {"linux", "arm64", "v8"});
  test::tag_in_layout(f.layout, foreign, "upstream");

  const auto a2 = f.variant("a", "", 2);
  const auto second = f.write("2.0", {a2}, build::IndexMerge::replace);
  CHECK(second != first);
  CHECK(f.tags() == std::map<std::string, oci::Digest>{{"1.0", first.digest},
                                                       {"1.0-a", a.manifest.digest},
                                                       {"upstream", foreign.digest},
                                                       {"2.0", second.digest},
                                                       {"2.0-a", a2.manifest.digest}});
  // A partial build of a tag that does not exist yet starts from no variants.
  const auto b = f.variant("b", "v2");
  const auto third = f.write("3.0", {b}, build::IndexMerge::keep_other_variants);
  CHECK(ids(f.index(third)) == std::vector<std::string>{"b"});
}
