#include <doctest/doctest.h>

#include "hwimg/matrix/matrix_file.hpp"

using namespace hwimg::matrix;

namespace {

std::vector<std::string> errors_of(std::string_view text) { return parse_matrix_text(text, "m.yaml").errors; }

}  // namespace

TEST_CASE("a matrix file parses into positioned, canonical values") {
  const auto file = parse_matrix_text(R"(axes:
  cuda: ["12.8", 13.0]
  gpu: [sm_80, [sm_90a, sm_90], none]
  cpu: [x86_64_v3, zen4]
exclude:
  - {cuda: "12.8", gpu: sm_80}
include:
  - {cuda: "13.0", gpu: sm_100f, cpu: x86-64-v4, ptx: false, cuda_home: /opt/cuda}
ptx: true
cuda_home: toolkits/cuda-${cuda.version}
gcc: "13.2"
)",
                                      "dir/m.yaml");
  CHECK(file.errors.empty());
  CHECK(file.directory == "dir");
  REQUIRE(file.axes.size() == 3);
  CHECK(file.axes[0].key == "cuda");
  CHECK(file.axes[0].values[1].text == "13.0");
  CHECK(file.axes[0].values[1].at.line == 2);
  CHECK(file.axes[0].values[1].at.column == 18);
  CHECK(file.axes[1].values[1].text == "sm_90+sm_90a");
  CHECK(file.axes[1].values[1].items == std::vector<std::string>{"sm_90", "sm_90a"});
  CHECK(file.axes[1].values[2].text == "none");
  CHECK(file.axes[2].values[0].text == "x86-64-v3");
  REQUIRE(file.exclude.size() == 1);
  CHECK(file.exclude[0].at("gpu").text == "sm_80");
  REQUIRE(file.include.size() == 1);
  CHECK(file.include[0].at("ptx").text == "false");
  CHECK(file.include[0].at("cuda_home").text == "/opt/cuda");
  CHECK(file.ptx);
  CHECK(file.cuda_home->text == "toolkits/cuda-${cuda.version}");
  CHECK(file.gcc->text == "13.2");
}

TEST_CASE("JSON is accepted, being YAML") {
  const auto file = parse_matrix_text(R"({"axes": {"cuda": ["13.0"], "gpu": ["sm_90", "sm_8O"]}, "ptx": true})", "m.json");
  CHECK(file.errors == std::vector<std::string>{"m.json:1:46: unknown GPU target 'sm_8O' (did you mean sm_80?)"});
  CHECK(file.ptx);
}

TEST_CASE("axes are read in the order cuda, gpu, cpu whatever the file's order") {
  const auto file = parse_matrix_text("axes: {cpu: [x86-64-v2], gpu: [sm_80], cuda: ['13.0']}", "m.yaml");
  REQUIRE(file.axes.size() == 3);
  CHECK(file.axes[0].key == "cuda");
  CHECK(file.axes[2].key == "cpu");
}

TEST_CASE("misspelt names get the nearest valid one, with file:line:column") {
  CHECK(errors_of("axes:\n  gpu: [sm_8O]\n") ==
        std::vector<std::string>{"m.yaml:2:9: unknown GPU target 'sm_8O' (did you mean sm_80?)"});
  CHECK(errors_of("axes:\n  gpu: [sm_90f]\n") ==
        std::vector<std::string>{"m.yaml:2:9: unknown GPU target 'sm_90f': family (f) targets exist only for "
                                 "compute capability 10.0 and newer (did you mean sm_90a?)"});
  CHECK(errors_of("axes:\n  gpu: [[sm_80, sm_9O]]\n") ==
        std::vector<std::string>{"m.yaml:2:17: unknown GPU target 'sm_9O' (did you mean sm_90?)"});
  CHECK(errors_of("axes:\n  cpu: [haswel]\n") ==
        std::vector<std::string>{"m.yaml:2:9: unknown CPU target 'haswel' (did you mean haswell?)"});
  CHECK(errors_of("axes:\n  cpu: [x86-64-v5]\n") ==
        std::vector<std::string>{"m.yaml:2:9: unknown CPU target 'x86-64-v5' (did you mean x86-64-v4?)"});
  CHECK(errors_of("axes:\n  cuda: ['12.7']\n") ==
        std::vector<std::string>{"m.yaml:2:10: unknown CUDA toolkit version '12.7' (did you mean 12.6 or 12.8?)"});
  CHECK(errors_of("axes:\n  cuda: ['14.0']\n") ==
        std::vector<std::string>{"m.yaml:2:10: unknown CUDA toolkit version '14.0' (did you mean 13.4?)"});
  CHECK(errors_of("axes:\n  cuda: [13]\n") ==
        std::vector<std::string>{"m.yaml:2:10: CUDA version '13' must be MAJOR.MINOR (did you mean 13.0?)"});
  CHECK(errors_of("axes:\n  cuda: ['12.4.1']\n") ==
        std::vector<std::string>{"m.yaml:2:10: CUDA version '12.4.1' must be MAJOR.MINOR"});
}

TEST_CASE("unknown keys get the nearest valid key") {
  CHECK(errors_of("axis:\n  gpu: [sm_80]\n") ==
        std::vector<std::string>{"m.yaml:1:1: unknown key 'axis' (did you mean axes?)"});
  CHECK(errors_of("axes:\n  gpus: [sm_80]\n") ==
        std::vector<std::string>{"m.yaml:2:3: unknown key 'gpus' in axes (did you mean gpu?)"});
  CHECK(errors_of("axes: {gpu: [sm_80]}\nexclude:\n  - {gpx: sm_80}\n") ==
        std::vector<std::string>{"m.yaml:3:6: unknown key 'gpx' in exclude (did you mean gpu?)",
                                 "m.yaml:3:5: exclude entry is empty"});
  CHECK(errors_of("axes: {gpu: [sm_80]}\ninclude:\n  - {gpu: sm_80, pxt: true}\n") ==
        std::vector<std::string>{"m.yaml:3:18: unknown key 'pxt' in include (did you mean ptx?)"});
  CHECK(errors_of("axes: {gpu: [sm_80]}\nexclude:\n  - {gpu: sm_80, ptx: true}\n") ==
        std::vector<std::string>{"m.yaml:3:18: unknown key 'ptx' in exclude"});
  // An axis at the top level, as GitHub Actions' strategy.matrix writes it.
  CHECK(errors_of("cuda: [\"12.8\"]\ngpu: [sm_90]\n").front() ==
        "m.yaml:1:1: unknown key 'cuda' (axes go under axes:, as in axes: {cuda: [...]})");
}

TEST_CASE("wrong types are named") {
  CHECK(errors_of("- a\n") == std::vector<std::string>{"m.yaml:1:1: the matrix must be a mapping, not a list"});
  CHECK(errors_of("") == std::vector<std::string>{"m.yaml:0:0: the matrix is empty"});
  CHECK(errors_of("axes: [sm_80]\n") ==
        std::vector<std::string>{"m.yaml:1:7: axes must be a mapping of cuda, gpu, cpu and driver lists, not a list"});
  CHECK(errors_of("axes:\n  gpu: {a: b}\n") ==
        std::vector<std::string>{"m.yaml:2:8: axes.gpu must be a list, not a mapping"});
  CHECK(errors_of("axes:\n  gpu: []\n") == std::vector<std::string>{"m.yaml:2:8: axes.gpu is empty"});
  CHECK(errors_of("axes:\n  cpu: [[zen4]]\n") ==
        std::vector<std::string>{"m.yaml:2:9: cpu must be a value, not a list"});
  CHECK(errors_of("axes:\n  gpu: [[]]\n") ==
        std::vector<std::string>{"m.yaml:2:9: an empty gpu list (write none for a CPU-only variant)"});
  CHECK(errors_of("axes:\n  gpu: [[none, sm_80]]\n") ==
        std::vector<std::string>{"m.yaml:2:9: none cannot be listed with GPU targets"});
  CHECK(errors_of("axes:\n  gpu: [[sm_80, sm_80]]\n") ==
        std::vector<std::string>{"m.yaml:2:9: a gpu list names a target twice"});
  CHECK(errors_of("axes: {gpu: [sm_80]}\nptx: maybe\n") ==
        std::vector<std::string>{"m.yaml:2:6: ptx must be true or false, not 'maybe'"});
  CHECK(errors_of("axes: {gpu: [sm_80]}\nptx: [true]\n") ==
        std::vector<std::string>{"m.yaml:2:6: ptx must be true or false, not a list"});
  CHECK(errors_of("axes: {gpu: [sm_80]}\nexclude: {gpu: sm_80}\n") ==
        std::vector<std::string>{"m.yaml:2:10: exclude must be a list of mappings, not a mapping"});
  CHECK(errors_of("axes: {gpu: [sm_80]}\ninclude: [sm_80]\n") ==
        std::vector<std::string>{"m.yaml:2:11: each include entry must be a mapping, not a value"});
  CHECK(errors_of("axes: {gpu: [sm_80]}\ngcc: twelve\n") ==
        std::vector<std::string>{"m.yaml:2:6: gcc must be a version MAJOR.MINOR such as \"12.2\", not 'twelve'"});
  CHECK(errors_of("axes: {gpu: [sm_80]}\ncuda_home: [a]\n") ==
        std::vector<std::string>{"m.yaml:2:12: cuda_home must be a path, not a list"});
}

TEST_CASE("duplicate axis values and YAML syntax errors are positioned") {
  CHECK(errors_of("axes:\n  gpu: [sm_80, sm_90, sm_80]\n") ==
        std::vector<std::string>{"m.yaml:2:23: duplicate value 'sm_80' in axes.gpu (first at line 2)"});
  CHECK(errors_of("axes: [a\n") == std::vector<std::string>{"m.yaml:2:1: end of sequence flow not found"});
}

TEST_CASE("every error in a file is reported at once") {
  const auto errors = errors_of("axes:\n  cuda: ['12.7']\n  gpu: [sm_8O, sm_90f]\n  cpu: [haswel]\nptxx: true\n");
  CHECK(errors.size() == 5);
}

TEST_CASE("a missing file fails to read") {
  const auto file = read_matrix_file("/nonexistent/m.yaml");
  REQUIRE_FALSE(file);
  CHECK(file.error().message.find("/nonexistent/m.yaml") != std::string::npos);
}

TEST_CASE("driver versions are NVIDIA's BRANCH.MINOR[.PATCH], from a branch hwimg knows") {
  CHECK(errors_of("axes: {driver: ['535.247.01', '470.82', none]}\n").empty());
  CHECK(errors_of("axes: {driver: ['535', 5x.1, [1]]}\n") ==
        std::vector<std::string>{
            "m.yaml:1:17: driver version '535' must be NVIDIA's BRANCH.MINOR[.PATCH], such as 535.247.01",
            "m.yaml:1:24: driver version '5x.1' must be NVIDIA's BRANCH.MINOR[.PATCH], such as 535.247.01",
            "m.yaml:1:30: driver must be a value, not a list"});
  CHECK(errors_of("axes: {driver: ['390.30.1.2', '1.2.3']}\n") ==
        std::vector<std::string>{
            "m.yaml:1:17: driver version '390.30.1.2' must be NVIDIA's BRANCH.MINOR[.PATCH], such as 535.247.01",
            "m.yaml:1:31: driver 1.2.3 is older than any driver hwimg knows (branch 450, CUDA 11.0, is the oldest)"});
  CHECK(errors_of("axes: {driver: ['535.1', '535.1']}\n").size() == 1);  // a duplicate
}
