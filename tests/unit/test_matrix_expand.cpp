#include <algorithm>
#include <cstdlib>

#include <doctest/doctest.h>

#include "hwimg/matrix/expand.hpp"
#include "hwimg/util/files.hpp"
#include "test_support.hpp"

using namespace hwimg::matrix;

namespace {

MatrixReport expand(std::string_view text, SkipUnsupported skip = SkipUnsupported::no,
                    std::filesystem::path cuda_root = "/usr/local") {
  return expand_matrix(parse_matrix_text(text, "m.yaml"), {skip, std::move(cuda_root)});
}

std::vector<std::string> ids(const MatrixReport& report) {
  std::vector<std::string> result;
  for (const auto& variant : report.variants) {
    result.push_back(variant.id);
  }
  return result;
}

const Variant& find(const MatrixReport& report, std::string_view id) {
  const auto found = std::ranges::find(report.variants, id, &Variant::id);
  REQUIRE(found != report.variants.end());
  return *found;
}

}  // namespace

TEST_CASE("the design's example expands: product, exclude, then include") {
  const auto report = expand(R"(axes:
  cuda: ["12.8", "13.0"]
  gpu: [sm_80, sm_90, sm_100]
  cpu: [x86-64-v2, x86-64-v3, x86-64-v4, zen4]
exclude:
  - {cuda: "12.8", gpu: sm_100}
include:
  - {cuda: "13.0", gpu: sm_90a, cpu: x86-64-v4}
ptx: true
)");
  CHECK(report.errors.empty());
  CHECK(report.warnings.empty());
  REQUIRE(report.variants.size() == 21);
  CHECK(report.variants.front().id == "cuda12.8-sm80-x86-64-v2");
  CHECK(report.variants[3].id == "cuda12.8-sm80-zen4");
  CHECK(report.variants.back().id == "cuda13.0-sm90a-x86-64-v4");
  CHECK(std::ranges::none_of(report.variants, [](const Variant& v) { return v.id.starts_with("cuda12.8-sm100"); }));
  CHECK(hwimg::hw::join_target_names(report.variants.back().gpu_targets) == "compute_90,sm_90a");
  CHECK(hwimg::hw::join_target_names(find(report, "cuda13.0-sm100-x86-64-v3").gpu_targets) == "sm_100,compute_100");
}

TEST_CASE("exclude removes every combination that matches its keys") {
  const auto report = expand(R"(axes:
  cuda: ["12.8", "13.0"]
  gpu: [sm_80, sm_90]
exclude:
  - {gpu: sm_80}
  - {cuda: "12.8", gpu: sm_120}
)");
  CHECK(ids(report) == std::vector<std::string>{"cuda12.8-sm90-x86-64-v1", "cuda13.0-sm90-x86-64-v1"});
  CHECK(report.warnings == std::vector<std::string>{"m.yaml:6:12: exclude entry matches no combination"});
  CHECK(expand("axes: {gpu: [none]}\nexclude:\n  - {cpu: zen4}\n").errors ==
        std::vector<std::string>{"m.yaml:3:11: exclude key 'cpu' is not an axis of this matrix"});
}

TEST_CASE("include extends combinations whose original values it keeps, else adds one") {
  const auto report = expand(R"(axes:
  cuda: ["13.0"]
  gpu: [sm_80, sm_90]
  cpu: [x86-64-v3]
ptx: true
include:
  - {gpu: sm_80, ptx: false}
  - {cuda: "13.0", gpu: sm_90, cpu: x86-64-v4}
  - {cpu: zen4}
)");
  CHECK(report.errors.empty());
  CHECK(ids(report) == std::vector<std::string>{"cuda13.0-sm80-x86-64-v3", "cuda13.0-sm90-x86-64-v3",
                                                "cuda13.0-sm90-x86-64-v4", "cpu-zen4"});
  CHECK(hwimg::hw::join_target_names(report.variants[0].gpu_targets) == "sm_80");
  CHECK(hwimg::hw::join_target_names(report.variants[1].gpu_targets) == "sm_90,compute_90");
  CHECK(hwimg::hw::join_target_names(report.variants[2].gpu_targets) == "sm_90,compute_90");
}

TEST_CASE("include adds keys that are not axes, and a later include may overwrite them") {
  const auto report = expand(R"(axes:
  cuda: ["13.0"]
  gpu: [sm_80, sm_90]
include:
  - {gpu: sm_90, cpu: zen4}
  - {gpu: sm_90, cpu: zen3}
)");
  CHECK(ids(report) == std::vector<std::string>{"cuda13.0-sm80-x86-64-v1", "cuda13.0-sm90-zen3"});
}

TEST_CASE("gpu none drops the cuda axis and appears once") {
  const auto report = expand(R"(axes:
  cuda: ["12.8", "13.0"]
  gpu: [none, sm_90]
  cpu: [x86-64-v2, x86-64-v3]
)");
  CHECK(ids(report) == std::vector<std::string>{"cpu-x86-64-v2", "cpu-x86-64-v3", "cuda12.8-sm90-x86-64-v2",
                                                "cuda12.8-sm90-x86-64-v3", "cuda13.0-sm90-x86-64-v2",
                                                "cuda13.0-sm90-x86-64-v3"});
  const auto& cpu_only = report.variants.front();
  CHECK_FALSE(cpu_only.cuda.has_value());
  CHECK(cpu_only.gpu_targets.empty());
  CHECK(cpu_only.nvidia_require_cuda.empty());
  CHECK_FALSE(cpu_only.annotations.contains("org.hwimg.cuda.version"));
  CHECK_FALSE(cpu_only.annotations.contains("org.hwimg.gpu.targets"));
  CHECK(cpu_only.variables.at("cuda.version").empty());
  CHECK(cpu_only.variables.at("gpu.gencode").empty());
}

TEST_CASE("variant ids for lists, PTX-only and arch-specific targets") {
  const auto report = expand(R"(axes:
  cuda: ["13.0"]
  gpu: [[sm_90, sm_80], compute_80, sm_100f]
  cpu: [skylake_avx512]
)");
  CHECK(ids(report) == std::vector<std::string>{"cuda13.0-sm80_sm90-skylake_avx512",
                                                "cuda13.0-compute80-skylake_avx512",
                                                "cuda13.0-sm100f-skylake_avx512"});
}

TEST_CASE("platform, annotations, requirement and variables of a variant") {
  const auto report = expand("axes: {cuda: ['13.0'], gpu: [sm_90a], cpu: [zen4, x86-64-v1, x86-64-v3]}\nptx: true\n",
                             SkipUnsupported::no, "/opt/toolkits");
  REQUIRE(report.variants.size() == 3);
  const auto& zen4 = report.variants[0];
  CHECK(zen4.id == "cuda13.0-sm90a-zen4");
  CHECK(zen4.platform == hwimg::oci::Platform{"linux", "amd64", "v4"});
  CHECK(zen4.cpu_level == "x86-64-v4");
  CHECK(zen4.cpu_target == "zen4");
  CHECK(zen4.annotations.at("org.hwimg.variant") == "cuda13.0-sm90a-zen4");
  CHECK(zen4.annotations.at("org.hwimg.cuda.version") == "13.0");
  CHECK(zen4.annotations.at("org.hwimg.gpu.targets") == "compute_90,sm_90a");
  CHECK(zen4.annotations.at("org.hwimg.cpu.level") == "x86-64-v4");
  CHECK(zen4.annotations.at("org.hwimg.cpu.target") == "zen4");
  const auto& features = zen4.annotations.at("org.hwimg.cpu.features");
  CHECK(features.find("avx512_bf16") != std::string::npos);
  CHECK(features.find("avx512f") == std::string::npos);  // part of the level
  CHECK(features.find("flush_l1d") == std::string::npos);  // not an instruction-set feature
  CHECK(zen4.nvidia_require_cuda == "cuda>=13.0,arch>=9.0 driver>=580,arch=9.0");
  CHECK(zen4.cuda_home == "/opt/toolkits/cuda-13.0");
  CHECK(zen4.variables == std::map<std::string, std::string>{
                              {"variant", "cuda13.0-sm90a-zen4"},
                              {"cuda.version", "13.0"},
                              {"cuda.home", "/opt/toolkits/cuda-13.0"},
                              {"gpu.targets", "compute_90,sm_90a"},
                              {"gpu.gencode", "-gencode arch=compute_90,code=compute_90 -gencode "
                                              "arch=compute_90a,code=sm_90a"},
                              {"gpu.cmake", "90-virtual;90a-real"},
                              {"cpu.level", "x86-64-v4"},
                              {"cpu.target", "zen4"},
                              {"cpu.march", "-march=znver3 -mtune=znver3 -mavx512f -mavx512dq -mavx512ifma "
                                            "-mavx512cd -mavx512bw -mavx512vl -mavx512vbmi -mavx512vbmi2 "
                                            "-mavx512vnni -mavx512bitalg"},
                              {"driver.version", ""},
                              {"driver.branch", ""},
                          });
  const auto& baseline = report.variants[1];
  CHECK(baseline.platform == hwimg::oci::Platform{"linux", "amd64", ""});
  CHECK_FALSE(baseline.annotations.contains("org.hwimg.cpu.target"));
  CHECK(baseline.variables.at("cpu.march") == "-march=x86-64 -mtune=generic");
  CHECK(report.variants[2].platform.variant == "v3");
  CHECK(report.variants[2].variables.at("cpu.march") == "-march=x86-64-v3 -mtune=generic");
}

TEST_CASE("cuda_home from the matrix, an include entry, relative to the matrix file") {
  const auto file = parse_matrix_text(R"(axes: {cuda: ["12.8", "13.0"], gpu: [sm_90]}
cuda_home: toolkits/cuda-${cuda.version}
include:
  - {cuda: "13.0", cuda_home: /opt/cuda13}
)",
                                      "/srv/matrix/m.yaml");
  const auto report = expand_matrix(file, {});
  REQUIRE(report.variants.size() == 2);
  CHECK(report.variants[0].cuda_home == "/srv/matrix/toolkits/cuda-12.8");
  CHECK(report.variants[1].cuda_home == "/opt/cuda13");
  CHECK(report.variants[1].variables.at("cuda.home") == "/opt/cuda13");
}

TEST_CASE("every unsupported combination is reported at once with its reason") {
  const auto report = expand(R"(axes:
  cuda: ["11.7", "12.8", "13.0"]
  gpu: [sm_70, sm_90, sm_103]
exclude:
  - {cuda: "12.8", gpu: sm_90}
)");
  CHECK(report.errors == std::vector<std::string>{
                             "m.yaml:3:16: variant cuda11.7-sm90-x86-64-v1: sm_90 needs CUDA 11.8 or newer",
                             "m.yaml:3:23: variant cuda11.7-sm103-x86-64-v1: sm_103 needs CUDA 12.9 or newer",
                             "m.yaml:3:23: variant cuda12.8-sm103-x86-64-v1: sm_103 needs CUDA 12.9 or newer",
                             "m.yaml:3:9: variant cuda13.0-sm70-x86-64-v1: CUDA 13.0 dropped sm_70; the last "
                             "toolkit for it is CUDA 12.9",
                         });
  CHECK(ids(report) == std::vector<std::string>{"cuda11.7-sm70-x86-64-v1", "cuda12.8-sm70-x86-64-v1",
                                                "cuda13.0-sm90-x86-64-v1", "cuda13.0-sm103-x86-64-v1"});
}

TEST_CASE("--skip-unsupported turns unsupported combinations into warnings, not name errors") {
  const auto report = expand("axes:\n  cuda: ['12.8', '13.0']\n  gpu: [sm_100f, sm_72]\n", SkipUnsupported::yes);
  CHECK(report.errors.empty());
  CHECK(report.warnings ==
        std::vector<std::string>{"m.yaml:3:9: skipped variant cuda12.8-sm100f-x86-64-v1: sm_100f needs CUDA 12.9 or "
                                 "newer",
                                 "m.yaml:3:18: skipped variant cuda13.0-sm72-x86-64-v1: CUDA 13.0 dropped sm_72; the "
                                 "last toolkit for it is CUDA 12.9"});
  CHECK(ids(report) == std::vector<std::string>{"cuda12.8-sm72-x86-64-v1", "cuda13.0-sm100f-x86-64-v1"});
  CHECK(expand("axes:\n  gpu: [sm_8O]\n", SkipUnsupported::yes).errors.size() == 1);
}

TEST_CASE("a CPU target the matrix's GCC cannot build for is unsupported") {
  CHECK(expand("axes: {gpu: [none], cpu: [zen5]}\n").errors ==
        std::vector<std::string>{"m.yaml:1:27: variant cpu-zen5: GCC 12.2 cannot build for zen5 (it needs GCC 14.1 "
                                 "or newer; set gcc in the matrix to the version the recipe uses)"});
  const auto report = expand("axes: {gpu: [none], cpu: [zen5]}\ngcc: '14.2'\n");
  CHECK(report.errors.empty());
  CHECK(report.variants.at(0).cpu_march == "-march=znver5 -mtune=znver5");
}

TEST_CASE("GPU targets without a CUDA version, and empty expansions, are errors") {
  CHECK(expand("axes: {gpu: [sm_90]}\n").errors ==
        std::vector<std::string>{"m.yaml:1:14: variant sm90-x86-64-v1: GPU targets need a CUDA version (add a cuda "
                                 "axis or a cuda key)"});
  CHECK(expand("axes: {gpu: [none]}\nexclude:\n  - {gpu: none}\n").errors ==
        std::vector<std::string>{"m.yaml:1:1: the matrix has no variants (no axes, or all excluded)"});
  CHECK(expand("include:\n  - {gpu: none, cpu: x86-64-v2}\n").variants.at(0).id == "cpu-x86-64-v2");
}

TEST_CASE("arm64 CPU targets give an arm64 platform") {
  const auto report = expand("axes: {gpu: [none], cpu: [neoverse_v2]}\n");
  REQUIRE(report.variants.size() == 1);
  CHECK(report.variants[0].platform == hwimg::oci::Platform{"linux", "arm64", "v8"});
  CHECK(report.variants[0].cpu_level == "armv9.0a");
}

TEST_CASE("load_matrix lists every error in one message") {
  const auto dir = hwimg::test::scratch_directory("hwimg-matrix");
  const auto path = dir.path() / "m.yaml";
  hwimg::test::write_file(path, "axes:\n  cuda: ['12.4']\n  gpu: [sm_8O, sm_100]\n");
  const auto loaded = load_matrix(path, {});
  REQUIRE_FALSE(loaded);
  CHECK(loaded.error().message ==
        fmt::format("failed to load matrix {0}: 2 errors:\n{0}:3:9: unknown GPU target 'sm_8O' (did you mean "
                    "sm_80?)\n{0}:3:16: variant cuda12.4-sm100-x86-64-v1: sm_100 needs CUDA 12.8 or newer",
                    path.string()));
  hwimg::test::write_file(path, "axes:\n  cuda: ['12.4']\n  gpu: [sm_80, sm_100]\n");
  const auto skipped = load_matrix(path, {SkipUnsupported::yes});
  REQUIRE(skipped);
  CHECK(skipped->variants.size() == 1);
  CHECK(skipped->warnings.size() == 1);
}

TEST_CASE("a matrix with many errors lists the first 20 and counts the rest") {
  const auto dir = hwimg::test::scratch_directory();
  std::string text = "axes:\n  gpu: [none]\n  cpu: [";
  for (int i = 0; i < 30; ++i) text += fmt::format("{}zen{}", i ? ", " : "", 100 + i);
  text += "]\n";
  const auto path = dir.path() / "m.yaml";
  hwimg::test::write_file(path, text);
  const auto loaded = load_matrix(path, {SkipUnsupported::no, "/usr/local"});
  REQUIRE(!loaded);
  const auto& message = loaded.error().message;
  CHECK(message.starts_with(fmt::format("failed to load matrix {}: 30 errors:\n", path.string())));
  CHECK(std::ranges::count(message, '\n') == 21);
  CHECK(message.ends_with("\n... and 10 more"));
}

TEST_CASE("a driver axis: one variant per bundled driver, labelled, with its variables; none keeps the host's") {
  const auto report = expand(R"(axes:
  cuda: ["12.4"]
  gpu: [sm_80, none]
  cpu: [x86-64-v3]
  driver: [none, "535.247.01", "570.195.03"]
)");
  CHECK(report.errors.empty());
  // CPU-only variants have nothing for a driver to run: one of them, whatever the driver.
  CHECK(ids(report) == std::vector<std::string>{"cuda12.4-sm80-x86-64-v3", "cuda12.4-sm80-x86-64-v3-driver535.247.01",
                                                "cuda12.4-sm80-x86-64-v3-driver570.195.03", "cpu-x86-64-v3"});
  const auto& bundled = find(report, "cuda12.4-sm80-x86-64-v3-driver535.247.01");
  REQUIRE(bundled.bundled_driver);
  CHECK(bundled.bundled_driver->str() == "535.247.01");
  CHECK(bundled.annotations.at("org.hwimg.driver.bundled") == "535.247.01");
  CHECK(bundled.platform == hwimg::oci::Platform{"linux", "amd64", "v3"});
  CHECK(bundled.variables.at("driver.version") == "535.247.01");
  CHECK(bundled.variables.at("driver.branch") == "535");
  const auto& toolkit = find(report, "cuda12.4-sm80-x86-64-v3");
  CHECK_FALSE(toolkit.bundled_driver);
  CHECK_FALSE(toolkit.annotations.contains("org.hwimg.driver.bundled"));
  CHECK(toolkit.variables.at("driver.version").empty());
  CHECK(find(report, "cpu-x86-64-v3").variables.at("driver.version").empty());
}

TEST_CASE("a driver too old for the variant's CUDA is refused (or skipped), naming the range it needs") {
  const auto text = "axes: {cuda: ['12.4'], gpu: [sm_80], driver: ['470.256.02', '525.60.13']}\n";
  const auto report = expand(text);
  REQUIRE(report.errors.size() == 1);
  CHECK(report.errors.front() ==
        "m.yaml:1:47: variant cuda12.4-sm80-x86-64-v1-driver470.256.02: driver 470.256.02 (CUDA 11.4) cannot run "
        "CUDA 12.4 code: it needs a driver of CUDA 12.x's range, from 525 on (docs/compatibility.md#cuda-driver-floors)");
  // 525 runs CUDA 12.4 by minor-version compatibility.
  const auto skipped = expand(text, SkipUnsupported::yes);
  CHECK(ids(skipped) == std::vector<std::string>{"cuda12.4-sm80-x86-64-v1-driver525.60.13"});
  CHECK(skipped.warnings.size() == 1);
}
