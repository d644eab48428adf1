#pragma once
// Reading a child's pipe to its end under a deadline: the one poll loop the process runner and the
// probe's child processes share.

#include <chrono>
#include <functional>
#include <string_view>

namespace hwimg::util {

enum class PipeEnd { end_of_file, timed_out, failed };

struct PipeResult {
  PipeEnd end = PipeEnd::end_of_file;
  int error_number = 0;  // errno when `failed`
};

// Passes each chunk read from `fd` to `on_data` until the writers close it or `deadline` passes
// (time_point::max(): no deadline). Interrupted calls are retried.
[[nodiscard]] PipeResult read_pipe_until(int fd, std::chrono::steady_clock::time_point deadline,
                                         const std::function<void(std::string_view)>& on_data);

}  // namespace hwimg::util
