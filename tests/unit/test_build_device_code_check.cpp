// The builder's device-code check over every layer of a GPU variant (docs/recipe.md#device-code):
// own layers exact, shared layers per module and base layers per file serving every GPU the
// declared targets serve, base layers read straight from their blobs, each layer once per build.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "hwimg/build/device_code_check.hpp"
#include "hwimg/matrix/variant.hpp"
#include "hwimg/oci/layer_writer.hpp"
#include "hwimg/util/strings.hpp"
#include "test_support.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

const fs::path fatbin_fixtures = fs::path(HWIMG_TEST_DATA_DIR) / "fatbin";

std::vector<hw::GpuTarget> targets(std::initializer_list<std::string_view> names) {
  std::vector<hw::GpuTarget> out;
  for (const auto name : names) out.push_back(hw::parse_gpu_target(name).value());
  std::ranges::sort(out);
  return out;
}

std::string capabilities(std::initializer_list<std::string_view> declared, std::initializer_list<std::string_view> have) {
  std::vector<std::string> names;
  for (const auto& capability : build::unserved_capabilities(targets(declared), targets(have))) {
    names.push_back(capability.str());
  }
  return util::join(names, " ");
}

// A directory holding copies of the named fixtures.
fs::path fixture_directory(const fs::path& at, std::initializer_list<std::string_view> names) {
  REQUIRE(util::make_directories(at));
  for (const auto name : names) fs::copy_file(fatbin_fixtures / name, at / name);
  return at;
}

// A base with one layer (the named fixtures under /usr/lib), stored in `layout`.
std::pair<build::BaseImage, fs::path> base_with(const oci::Layout& layout, const fs::path& scratch,
                                                std::initializer_list<std::string_view> names) {
  const auto directory = fixture_directory(scratch / "base-lib", names);
  const auto written = oci::write_layer(layout, {{directory, "/usr/lib"}}, {});
  REQUIRE(written);
  build::BaseImage base;
  base.reference = "oci:bases:cuda";
  base.layers = {written->descriptor};
  return {base, layout.blob_path(written->descriptor.digest)};
}

build::VariantPlan plan_for(const matrix::Variant& variant, std::vector<build::LayerPlan> layers) {
  build::VariantPlan plan;
  plan.variant = &variant;
  plan.layers = std::move(layers);
  return plan;
}

matrix::Variant gpu_variant(std::string id, std::initializer_list<std::string_view> declared) {
  matrix::Variant variant;
  variant.id = std::move(id);
  variant.gpu_targets = targets(declared);
  return variant;
}

}  // namespace

TEST_CASE("the capabilities declared targets run on that other code lacks, by stretch") {
  CHECK(capabilities({"sm_90"}, {"sm_80"}) == "9.0");
  CHECK(capabilities({"sm_90a"}, {"sm_80", "sm_90"}) == "");        // sm_90 SASS runs on 9.0
  CHECK(capabilities({"sm_80", "compute_80"}, {"sm_80", "sm_90", "compute_90"}) == "");
  CHECK(capabilities({"sm_80", "compute_80"}, {"sm_80", "sm_90"}) == "10.0");  // no PTX for later GPUs
  CHECK(capabilities({"compute_80"}, {"sm_86"}) == "8.0 9.0");
  CHECK(capabilities({"sm_100f"}, {"compute_80"}) == "");           // PTX JIT serves it
  CHECK(capabilities({}, {"sm_80"}) == "");
}

TEST_CASE("a base layer's device code is read from its blob, each file named with its layer") {
  const auto tmp = test::scratch_directory();
  auto layout = oci::Layout::open(tmp.path() / "layout", oci::OpenMode::create);
  REQUIRE(layout);
  const auto lib = fixture_directory(tmp.path() / "lib", {"two-modules.so", "libkernels.a", "README.md"});
  fs::create_symlink("two-modules.so", lib / "link.so");
  const auto written = oci::write_layer(*layout, {{lib, "/usr/lib"}}, {{oci::Compression::zstd}, 0});
  REQUIRE(written);
  const auto scan = build::scan_layer_blob(layout->blob_path(written->descriptor.digest), written->descriptor.digest.str());
  REQUIRE_MESSAGE(scan, scan.error().message);
  const auto in_layer = " in layer " + written->descriptor.digest.str();
  CHECK(scan->files == std::vector<fs::path>{"/usr/lib/libkernels.a" + in_layer, "/usr/lib/two-modules.so" + in_layer});
  REQUIRE(scan->modules.size() == 4);  // two archive members, two fatbin containers; the symlink not read
  CHECK(scan->modules[2].module.targets == targets({"sm_80"}));
  CHECK(scan->modules[3].module.targets == targets({"sm_80", "sm_90"}));
}

TEST_CASE("base layers: each file must run on every GPU the declared targets run on") {
  const auto tmp = test::scratch_directory();
  auto layout = oci::Layout::open(tmp.path() / "layout", oci::OpenMode::create);
  REQUIRE(layout);
  // two-modules.so: one module sm_80, one sm_80 + sm_90; together sm_80 and sm_90, no PTX.
  const auto [base, blob] = base_with(*layout, tmp.path(), {"two-modules.so"});
  const auto own_sm90a = fixture_directory(tmp.path() / "own-sm90a", {"k-sm90a.cubin"});
  const auto own_sm80 = fixture_directory(tmp.path() / "own-sm80", {"k-sm80-compute80.fatbin"});
  const auto hopper = gpu_variant("cuda13.0-sm90a", {"sm_90a"});
  const auto ampere = gpu_variant("cuda13.0-sm80", {"sm_80", "compute_80"});
  build::DeviceCodeCheck check;

  const std::vector<fs::path> files{blob};
  const auto fine = check.check(plan_for(hopper, {{own_sm90a, "/opt", {}, {}, true, true}}), base, files);
  CHECK_MESSAGE(fine.has_value(), (fine ? std::string() : fine.error().message));

  const auto refused = check.check(plan_for(ampere, {{own_sm80, "/opt", {}, {}, true, true}}), base, files);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message ==
        "failed to check the device code of variant cuda13.0-sm80: it declares sm_80, compute_80, but not all device "
        "code in its image runs where that does: /usr/lib/two-modules.so in layer " +
            base.layers[0].digest.str() +
            " (base oci:bases:cuda) has sm_80, sm_90: no code for compute capability 10.0");

  // Read once per build: the blob is gone, the answer stays.
  fs::remove(blob);
  CHECK(check.check(plan_for(hopper, {{own_sm90a, "/opt", {}, {}, true, true}}), base, files).has_value());
  // A build that leaves the base's layers in their registry has no files to read.
  build::DeviceCodeCheck fresh;
  CHECK(fresh.check(plan_for(ampere, {{own_sm80, "/opt", {}, {}, true, true}}), base, {}).has_value());
}

TEST_CASE("shared layers: every module must run on every GPU the declared targets run on") {
  const auto tmp = test::scratch_directory();
  const auto own = fixture_directory(tmp.path() / "own", {"k-sm90a.cubin"});
  const auto hopper = gpu_variant("cuda13.0-sm90a", {"sm_90a"});
  build::DeviceCodeCheck check;
  const build::BaseImage scratch;

  // libkernels.a: each member sm_80 + sm_90, so every module runs on 9.0.
  const auto archive = fixture_directory(tmp.path() / "archive", {"libkernels.a"});
  const auto fine = check.check(plan_for(hopper, {{own, "/opt", {}, {}, true, true}, {archive, "/lib", {}, {}, false, false}}),
                                scratch, {});
  CHECK_MESSAGE(fine.has_value(), (fine ? std::string() : fine.error().message));

  // two-modules.so: its sm_80-only module does not, whatever the other module has.
  const auto two = fixture_directory(tmp.path() / "two", {"two-modules.so"});
  const auto refused =
      check.check(plan_for(hopper, {{own, "/opt", {}, {}, true, true}, {two, "/lib", {}, {}, false, false}}), scratch, {});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.starts_with(
      "failed to check the device code of variant cuda13.0-sm90a: it declares sm_90a, but not all device code in its "
      "image runs where that does: " +
      (two / "two-modules.so").string() + " (fatbin container at offset "));
  CHECK(refused.error().message.ends_with(", in a layer every variant shares) has sm_80: no code for compute capability 9.0"));

  // Read once per build: the source is gone, the answer stays.
  fs::remove_all(archive);
  CHECK(check.check(plan_for(hopper, {{own, "/opt", {}, {}, true, true}, {archive, "/lib", {}, {}, false, false}}),
                    scratch, {})
            .has_value());
}

TEST_CASE("the variant's own layers still hold exactly what it declares") {
  const auto tmp = test::scratch_directory();
  const auto own = fixture_directory(tmp.path() / "own", {"k-sm80-compute80.fatbin"});
  const auto variant = gpu_variant("cuda13.0-sm90", {"sm_90"});
  build::DeviceCodeCheck check;
  const auto refused = check.check(plan_for(variant, {{own, "/opt", {}, {}, true, true}}), build::BaseImage{}, {});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("missing sm_90") != std::string::npos);
}
