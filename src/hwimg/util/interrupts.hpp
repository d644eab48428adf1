#pragma once
// Ctrl-C (SIGINT), SIGTERM or SIGHUP while hwimg runs child processes: no new child starts, the
// running ones finish (a second signal sends their process groups SIGTERM, and SIGKILL after a
// grace period), and hwimg then ends by the signal. buildah 1.28 cleans up only when a RUN step is
// what it stops; killed between steps it leaves its containers mounted (docs/recipe.md).

#include <chrono>
#include <memory>

#include <sys/types.h>

namespace hwimg::util {

// The process groups of the children run_process has started, for the interrupt to reach.
namespace child_groups {
// Registers a child's group; false when an interrupt came meanwhile (the caller stops the child).
[[nodiscard]] bool add(pid_t group);
void remove(pid_t group);
// Whether an interrupt came: no new child starts.
[[nodiscard]] bool stopping();
}  // namespace child_groups

// While it lives, the three signals are taken from every thread created after it (so construct it
// before any) and handled by a thread of its own, as above; children get the signal mask back.
class InterruptForwarding {
public:
  explicit InterruptForwarding(std::chrono::milliseconds grace);
  InterruptForwarding(const InterruptForwarding&) = delete;
  InterruptForwarding& operator=(const InterruptForwarding&) = delete;
  ~InterruptForwarding();

private:
  struct State;
  std::unique_ptr<State> m_state;
};

}  // namespace hwimg::util
