#include <fstream>

#include <sys/stat.h>

#include <doctest/doctest.h>

#include "hwimg/matrix/expand.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

using namespace hwimg::matrix;

namespace {

Variant gpu_variant(const std::filesystem::path& home) {
  auto file = parse_matrix_text("axes: {cuda: ['12.8'], gpu: [sm_90], cpu: [x86-64-v3]}\n", "m.yaml");
  file.cuda_home = MatrixValue{home.string(), {home.string()}, {}, true};
  return expand_matrix(file, {}).variants.at(0);
}

}  // namespace

TEST_CASE("build variables and environment add the output directory") {
  const auto variant = gpu_variant("/opt/cuda-12.8");
  const auto variables = build_variables(variant, "/tmp/out");
  CHECK(variables.at("out") == "/tmp/out");
  CHECK(variables.at("variant") == "cuda12.8-sm90-x86-64-v3");
  const auto environment = build_environment(variant, "/tmp/out");
  CHECK(environment.at("HWIMG_OUT") == "/tmp/out");
  CHECK(environment.at("HWIMG_CUDA_VERSION") == "12.8");
  CHECK(environment.at("HWIMG_GPU_GENCODE") == "-gencode arch=compute_90,code=sm_90");
  CHECK(environment.at("HWIMG_CPU_MARCH") == "-march=x86-64-v3 -mtune=generic");
  CHECK(environment.at("CUDA_HOME") == "/opt/cuda-12.8");
}

TEST_CASE("resolve_toolkit finds nvcc under cuda_home, or names where it looked") {
  const auto dir = hwimg::test::scratch_directory("hwimg-toolkit");
  const auto missing = resolve_toolkit(gpu_variant(dir.path() / "cuda-12.8"));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message ==
        fmt::format("failed to find the CUDA 12.8 toolkit for variant cuda12.8-sm90-x86-64-v3: {}/cuda-12.8/bin/nvcc "
                    "does not exist or is not executable (install CUDA 12.8 there, or set cuda_home in the matrix)",
                    dir.path().string()));
  hwimg::test::write_file(dir.path() / "cuda-12.8" / "bin" / "nvcc", "#!/bin/sh\n", 0755);
  const auto found = resolve_toolkit(gpu_variant(dir.path() / "cuda-12.8"));
  REQUIRE(found);
  CHECK(found->nvcc == dir.path() / "cuda-12.8" / "bin" / "nvcc");
}

TEST_CASE("the default toolkit place is cuda-X.Y under the expansion's cuda_root") {
  const auto file = parse_matrix_text("axes: {cuda: ['12.8'], gpu: [sm_90]}\n", "m.yaml");
  CHECK(expand_matrix(file, {}).variants.at(0).cuda_home == "/usr/local/cuda-12.8");
  CHECK(expand_matrix(file, {SkipUnsupported::no, "/toolkits"}).variants.at(0).cuda_home == "/toolkits/cuda-12.8");
}

TEST_CASE("resolve_toolkit refuses a CPU-only variant") {
  const auto report = expand_matrix(parse_matrix_text("axes: {gpu: [none]}\n", "m.yaml"), {});
  CHECK(resolve_toolkit(report.variants.at(0)).error().message ==
        "failed to find a CUDA toolkit for variant cpu-x86-64-v1: it has no CUDA version");
}
