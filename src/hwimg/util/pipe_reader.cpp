#include "hwimg/util/pipe_reader.hpp"

#include <algorithm>
#include <cerrno>

#include <poll.h>
#include <unistd.h>

namespace hwimg::util {

PipeResult read_pipe_until(int fd, std::chrono::steady_clock::time_point deadline,
                           const std::function<void(std::string_view)>& on_data) {
  using Clock = std::chrono::steady_clock;
  char buffer[16384];
  while (true) {
    int wait_ms = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return {PipeEnd::timed_out, 0};
      wait_ms = static_cast<int>(std::min<long>(left.count(), 1 << 30));
    }
    pollfd poll_fd{fd, POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return {PipeEnd::failed, errno};
    if (ready == 0) continue;
    const auto got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return {PipeEnd::end_of_file, 0};
    on_data(std::string_view(buffer, static_cast<std::size_t>(got)));
  }
}

}  // namespace hwimg::util
