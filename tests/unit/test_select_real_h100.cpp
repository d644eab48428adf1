// Ground truth from hardware: the cuda-kernel example's variants were run on an H100 (driver
// 580.159.04) and the facts of that host were probed (tests/data/gpu). The selector must call
// compatible exactly the variants that ran, and choose the best of them.

#include <filesystem>
#include <map>
#include <sstream>

#include <doctest/doctest.h>

#include "hwimg/matrix/expand.hpp"
#include "hwimg/util/files.hpp"
#include "test_select_support.hpp"

using namespace select_test;
namespace fs = std::filesystem;

namespace {

const fs::path data_dir = HWIMG_TEST_DATA_DIR;

// "== <variant id>" then the program's output: the saxpy line when it ran, "failed" when not.
std::map<std::string, bool> variants_that_ran() {
  std::map<std::string, bool> ran;
  std::istringstream lines(util::read_file(data_dir / "gpu" / "h100-cuda-kernel-runs.txt").value());
  std::string line;
  std::string current;
  while (std::getline(lines, line)) {
    if (line.starts_with("== ")) {
      current = line.substr(3);
      ran[current] = false;
    } else if (!current.empty() && line.starts_with("saxpy of ")) {
      ran[current] = true;
    }
  }
  return ran;
}

select::Candidate candidate_of(const matrix::Variant& v) {
  select::Candidate candidate;
  candidate.descriptor.media_type = "application/vnd.oci.image.manifest.v1+json";
  candidate.descriptor.digest = digest_of(v.id);
  candidate.descriptor.platform = v.platform;
  candidate.descriptor.annotations = v.annotations;
  return candidate;
}

}  // namespace

TEST_CASE("the cuda-kernel variants that ran on a real H100 are exactly the compatible ones") {
  const auto host = probe::parse_host_facts(util::read_file(data_dir / "gpu" / "h100-probe.json").value(),
                                            "h100-probe.json").value();
  const auto expansion =
      matrix::load_matrix(data_dir.parent_path().parent_path() / "matrix" / "cuda-kernel.yaml", {})
          .value();
  std::vector<select::Candidate> candidates;
  for (const auto& v : expansion.variants) {
    candidates.push_back(candidate_of(v));
  }
  const auto ran = variants_that_ran();
  REQUIRE(ran.size() == candidates.size());
  const auto selection = run(candidates, host);
  for (const auto& verdict : selection.verdicts) {
    CAPTURE(verdict.requirements.name);
    REQUIRE(ran.contains(verdict.requirements.name));
    CHECK(verdict.compatible() == ran.at(verdict.requirements.name));
  }
  CHECK(chosen_name(selection) == "cuda13.0-sm90a-x86-64-v1");
  CHECK(verdict_of(selection, "cuda13.0-sm120-x86-64-v1").reasons ==
        std::vector<std::string>{
            "GPU 0 (NVIDIA H100 80GB HBM3): no code for compute capability 9.0 (has sm_120, compute_120)"});
  CHECK(verdict_of(selection, "cuda13.0-sm80-x86-64-v1").key.gpu_serving.kind == hw::ServeKind::ptx_jit);
}
