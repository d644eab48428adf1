#pragma once
// Running child processes with captured output and a deadline.

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::util {

// Whether a child starts from this process's environment or from nothing but what it is given.
enum class ParentEnvironment { inherited, none };

// Whether the child's stderr goes into `output` with its stdout, in the order written (a log to show
// on failure), or apart into `error_output` (stdout is data to parse; stderr only explains).
enum class StandardError { merged, separate };

struct ProcessSpec {
  std::vector<std::string> argv;
  std::filesystem::path working_directory;       // empty: inherit
  std::map<std::string, std::string> environment;  // added to (or replacing in) the parent's, or all of it
  ParentEnvironment parent_environment = ParentEnvironment::inherited;
  std::optional<std::string> standard_input;     // nullopt: /dev/null
  std::optional<std::chrono::milliseconds> timeout;
  // Output beyond this is dropped from the front, keeping the tail that explains a failure.
  std::size_t max_output = 1 << 20;
  // Passed through to our own stderr as it arrives (a build step's progress), besides capture.
  bool echo_output = false;
  std::string echo_prefix;  // put before each echoed line, e.g. the name of the variant it builds
  StandardError standard_error = StandardError::merged;
};

struct ProcessResult {
  int exit_status = 0;      // exit code, or 128 + signal number
  bool timed_out = false;
  std::string output;        // stdout, and stderr interleaved with it where merged
  std::string error_output;  // stderr where separate; each kept to its last `max_output` bytes
};

[[nodiscard]] Result<ProcessResult> run_process(const ProcessSpec& spec);

}  // namespace hwimg::util
