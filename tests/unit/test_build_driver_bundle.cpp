// A bundled user-mode driver (docs/recipe.md#bundled-driver): the recipe must say where a driver
// the matrix names comes from, before anything is built, and the config puts the driver's
// directory first on LD_LIBRARY_PATH. Reading and packing the libraries is
// tests/integration/test_build_driver.sh's.

#include <doctest/doctest.h>

#include "hwimg/build/driver_bundle.hpp"
#include "hwimg/matrix/expand.hpp"

using namespace hwimg;

namespace {

recipe::Recipe parse(std::string_view text) {
  auto parsed = recipe::parse_recipe(text, "/srv/app/recipe.yaml");
  REQUIRE_MESSAGE(parsed.has_value(), parsed.error().message);
  return std::move(*parsed);
}

// cuda12.4-sm80-x86-64-v1 (the host's driver), then its -driver535.247.01 and -driver570.195.03 twins.
std::vector<matrix::Variant> variants() {
  const auto file = matrix::parse_matrix_text(
      "axes: {cuda: ['12.4'], gpu: [sm_80], cpu: [x86-64-v1], driver: [none, '535.247.01', '570.195.03']}\n",
      "m.yaml");
  auto report = matrix::expand_matrix(file, {});
  REQUIRE(report.variants.size() == 3);
  return std::move(report.variants);
}

const std::string head = "name: a\nbase: scratch\nlayers: [{from: x, to: /x}]\n";

build::DriverPlan plan() {
  return {*hw::DriverVersion::parse("535.247.01"), "/opt/nvidia/535.247.01", "/usr/local/nvidia/lib64", {}};
}

}  // namespace

TEST_CASE("a matrix that names drivers needs the recipe's driver:, checked for every variant before any is built") {
  const auto all = variants();
  const auto missing = build::check_driver_recipe(parse(head), all);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().message ==
        "/srv/app/recipe.yaml: variant cuda12.4-sm80-x86-64-v1-driver535.247.01 bundles driver 535.247.01 (the "
        "matrix's driver axis), but the recipe does not say where its libraries are: add driver: {from: "
        "/opt/nvidia-drivers/${driver.version}}");
  const auto fixed = build::check_driver_recipe(parse(head + "driver: {from: /opt/nvidia}\n"), all);
  REQUIRE_FALSE(fixed.has_value());
  CHECK(fixed.error().message ==
        "/srv/app/recipe.yaml:4:16: driver.from names no variable, but the matrix names 2 drivers (535.247.01, "
        "570.195.03), which one directory cannot hold: use ${driver.version} in it, e.g. "
        "/opt/nvidia-drivers/${driver.version}");
  // One driver may come from a fixed place, such as the build machine's own libraries.
  CHECK(build::check_driver_recipe(parse(head + "driver: {from: /usr/lib/x86_64-linux-gnu}\n"),
                                   std::span(all).first(2)));
  CHECK(build::check_driver_recipe(parse(head + "driver: {from: \"/opt/nvidia/${driver.version}\"}\n"), all));
  // Variants that bundle nothing need no driver: key.
  CHECK(build::check_driver_recipe(parse(head), std::span(all).first(1)));
}

TEST_CASE("the driver's directory leads LD_LIBRARY_PATH, even where the base names it after another") {
  using Env = std::vector<std::pair<std::string, std::string>>;
  CHECK(build::driver_environment(plan(), std::nullopt) ==
        Env{{"LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"}, {"NVIDIA_VISIBLE_DEVICES", "void"}});
  CHECK(build::driver_environment(plan(), "/opt/app/lib").front().second == "/usr/local/nvidia/lib64:/opt/app/lib");
  // A libcuda.so.1 in /usr/local/cuda/compat would otherwise be loaded instead of the bundled one.
  CHECK(build::driver_environment(plan(), "/usr/local/cuda/compat:/usr/local/nvidia/lib64:/opt/lib").front().second ==
        "/usr/local/nvidia/lib64:/usr/local/cuda/compat:/opt/lib");
  CHECK(build::driver_environment(plan(), "/usr/local/nvidia/lib64").front().second == "/usr/local/nvidia/lib64");
}
