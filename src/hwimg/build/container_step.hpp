#pragma once
// Runs a build step inside a builder image (docs/recipe.md#build-image): with runc when hwimg runs
// as root, else rootless with bubblewrap. Both make the mounts of plan_container_mounts, so the
// cached root filesystem is only ever read.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "hwimg/build/container_mounts.hpp"
#include "hwimg/util/process.hpp"

namespace hwimg::build {

enum class ContainerRunner { runc, bwrap };

// runc as root, bwrap otherwise, checked by running it; the error names the one that is missing
// and the package to install.
[[nodiscard]] Result<ContainerRunner> find_container_runner();

enum class EchoOutput { no, yes };

struct ContainerStep {
  std::vector<ContainerMount> mounts;
  std::vector<std::string> argv;
  std::filesystem::path working_directory;         // inside the container
  std::map<std::string, std::string> environment;  // all of it: hwimg's own is not passed on
  std::filesystem::path scratch;  // an empty directory for runc's bundle and state; its name is unique
  EchoOutput echo = EchoOutput::no;
};

// The step's exit status and its output (stdout and stderr), as util::run_process reports them;
// the runner's own errors (a mount that failed) are part of that output.
[[nodiscard]] Result<util::ProcessResult> run_container_step(ContainerRunner runner, const ContainerStep& step);

}  // namespace hwimg::build
