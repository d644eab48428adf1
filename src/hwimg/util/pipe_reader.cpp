#include "hwimg/util/pipe_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <vector>

#include <poll.h>
#include <unistd.h>

namespace hwimg::util {

PipeResult read_pipes_until(std::span<const PipeSource> sources, std::chrono::steady_clock::time_point deadline) {
  using Clock = std::chrono::steady_clock;
  char buffer[16384];
  std::vector<pollfd> open;
  for (const auto& source : sources) open.push_back({source.fd, POLLIN, 0});
  while (std::ranges::any_of(open, [](const pollfd& p) { return p.fd >= 0; })) {
    int wait_ms = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return {PipeEnd::timed_out, 0};
      wait_ms = static_cast<int>(std::min<long>(left.count(), 1 << 30));
    }
    // poll ignores entries with a negative fd: those are the pipes already at their end.
    const int ready = ::poll(open.data(), open.size(), wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return {PipeEnd::failed, errno};
    for (std::size_t i = 0; i < open.size(); ++i) {
      if (open[i].fd < 0 || open[i].revents == 0) continue;
      const auto got = ::read(open[i].fd, buffer, sizeof buffer);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got < 0) return {PipeEnd::failed, errno};
      if (got == 0) {
        open[i].fd = -1;
        continue;
      }
      sources[i].on_data(std::string_view(buffer, static_cast<std::size_t>(got)));
    }
  }
  return {PipeEnd::end_of_file, 0};
}

}  // namespace hwimg::util
