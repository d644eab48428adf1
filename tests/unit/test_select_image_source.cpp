// Reading variants from a layout: the index only for hwimg variants, manifest and config for
// others, single-manifest images, and the per-variant tag printed for the chosen one.

#include <filesystem>

#include <doctest/doctest.h>

#include "hwimg/oci/layout.hpp"
#include "hwimg/select/image_source.hpp"
#include "hwimg/select/report.hpp"
#include "hwimg/util/files.hpp"
#include "test_select_support.hpp"
#include "test_support.hpp"

using namespace select_test;
namespace fs = std::filesystem;

namespace {

struct Fixture {
  util::TempDir tmp = test::scratch_directory("hwimg-select-");
  oci::Layout layout = oci::Layout::open(tmp.path() / "layout", oci::OpenMode::create).value();

  // A manifest whose config carries `env`; returns its descriptor in the index.
  oci::Descriptor image(const oci::Platform& platform, const std::vector<std::string>& env,
                        const oci::Annotations& annotations) {
    return test::put_image(layout, platform, env, annotations);
  }

  void tag(const oci::Descriptor& descriptor, const std::string& name) { test::tag_in_layout(layout, descriptor, name); }

  std::string reference(const std::string& tag_name) const { return "oci:" + (tmp.path() / "layout").string() + ":" + tag_name; }
};

}  // namespace

TEST_CASE("a layout index: hwimg variants from the index alone, others with their config") {
  Fixture f;
  const auto annotated = f.image({"linux", "amd64", "v3"}, {}, {{"org.hwimg.variant", "cpu-x86-64-v3"},
                                                               {"org.hwimg.cpu.level", "x86-64-v3"}});
  const auto foreign = f.image({"linux", "amd64", ""}, {"NVIDIA_REQUIRE_CUDA=cuda>=12.6"}, {});
  const auto index_descriptor = test::put_index(f.layout, {annotated, foreign});
  f.tag(index_descriptor, "1.0");
  f.tag(annotated, "1.0-cpu-x86-64-v3");

  const auto source = select::load_image_source(f.reference("1.0"), {});
  REQUIRE(source);
  REQUIRE(source->candidates.size() == 2);
  CHECK_FALSE(source->candidates[0].config.has_value());
  REQUIRE(source->candidates[1].config.has_value());
  CHECK(source->candidates[1].config->env == std::vector<std::string>{"NVIDIA_REQUIRE_CUDA=cuda>=12.6"});

  const auto selection = select::select_variant(source->candidates, cpu_host("x86-64-v3"), {}).value();
  CHECK(chosen_name(selection) == "cpu-x86-64-v3");
  CHECK(select::chosen_reference(*source, selection) == f.reference("1.0-cpu-x86-64-v3"));

  const auto json = select::render_json(*source, selection);
  CHECK(json.find("\"reference\": \"" + f.reference("1.0-cpu-x86-64-v3") + "\"") != std::string::npos);
  CHECK(json.find("\"rank\": 2") != std::string::npos);

  // Without a per-variant tag, the digest names it.
  const auto on_v1 = select::select_variant(source->candidates, cpu_host("x86-64-v1"), {}).value();
  CHECK(select::chosen_reference(*source, on_v1) ==
        "oci:" + (f.tmp.path() / "layout").string() + "@" + foreign.digest.str());
}

TEST_CASE("a single-manifest image is judged by its config and selected by its tag") {
  Fixture f;
  const auto only = f.image({"linux", "amd64", ""}, {"CUDA_VERSION=12.4.1"}, {});
  f.tag(only, "plain");
  const auto source = select::load_image_source(f.reference("plain"), {});
  REQUIRE(source);
  REQUIRE(source->candidates.size() == 1);
  const auto selection = select::select_variant(source->candidates, cpu_host("x86-64-v2"), {}).value();
  CHECK(chosen_name(selection) == "linux/amd64");
  CHECK(select::chosen_reference(*source, selection) == f.reference("plain"));

  const auto old_driver = with_gpus(cpu_host("x86-64-v2"), "535.104.05", "12.2", {"9.0"});
  const auto rejected = select::select_variant(source->candidates, old_driver, {}).value();
  CHECK_FALSE(rejected.chosen.has_value());
  const auto json = select::render_json(*source, rejected);
  CHECK(json.find("\"reference\": null") != std::string::npos);
  CHECK(json.find("\"digest\": null") != std::string::npos);
  CHECK(json.find("CUDA_VERSION: unsatisfied condition: cuda>=12.4") != std::string::npos);
  const auto table = select::render_explanation(*source, rejected);
  CHECK(table.find("rejected  CUDA_VERSION: unsatisfied condition: cuda>=12.4") != std::string::npos);
}

TEST_CASE("errors name the layout problem") {
  Fixture f;
  CHECK(select::load_image_source(f.reference("missing"), {}).error().message.starts_with(
      "failed to resolve tag \"missing\""));
}
