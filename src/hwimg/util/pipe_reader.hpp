#pragma once
// Reading a child's pipes to their end under a deadline: the one poll loop the process runner and
// the probe's child processes share.

#include <chrono>
#include <functional>
#include <span>
#include <string_view>

namespace hwimg::util {

enum class PipeEnd { end_of_file, timed_out, failed };

struct PipeResult {
  PipeEnd end = PipeEnd::end_of_file;
  int error_number = 0;  // errno when `failed`
};

struct PipeSource {
  int fd = -1;
  std::function<void(std::string_view)> on_data;
};

// Passes each chunk read from each source's fd to its `on_data` until the writers close them all
// or `deadline` passes (time_point::max(): no deadline). All are read as data arrives, so a child
// that fills one pipe while the reader waits on another cannot stall. Interrupted calls are retried.
[[nodiscard]] PipeResult read_pipes_until(std::span<const PipeSource> sources,
                                          std::chrono::steady_clock::time_point deadline);

}  // namespace hwimg::util
