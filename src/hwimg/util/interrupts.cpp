#include "hwimg/util/interrupts.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <ctime>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <pthread.h>
#include <unistd.h>

namespace hwimg::util {
namespace {

struct Registry {
  std::mutex mutex;
  std::condition_variable emptied;
  std::vector<pid_t> groups;
  std::atomic<bool> stopping{false};
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

namespace child_groups {

bool add(pid_t group) {
  auto& r = registry();
  {
    const std::scoped_lock lock(r.mutex);
    r.groups.push_back(group);
  }
  // After the push: an interrupt either sees this group in its list or is seen here.
  return !r.stopping.load();
}

void remove(pid_t group) {
  auto& r = registry();
  const std::scoped_lock lock(r.mutex);
  std::erase(r.groups, group);
  if (r.groups.empty()) r.emptied.notify_all();
}

bool stopping() { return registry().stopping.load(); }

}  // namespace child_groups

struct InterruptForwarding::State {
  sigset_t signals{};
  sigset_t previous{};
  std::atomic<bool> done{false};
  std::thread waiter;
};

namespace {

std::size_t running_children() {
  auto& r = registry();
  const std::scoped_lock lock(r.mutex);
  return r.groups.size();
}

void say(std::string_view text) {
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, text.data(), text.size());
}

// Ended by the signal itself, as without this class: the shell sees 128 + signal.
[[noreturn]] void end_by(int signal) {
  std::signal(signal, SIG_DFL);
  sigset_t only{};
  sigemptyset(&only);
  sigaddset(&only, signal);
  pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(signal);
  std::_Exit(128 + signal);
}

// The running children get SIGTERM, and `grace` to end before SIGKILL.
void stop_children(std::chrono::milliseconds grace) {
  auto& r = registry();
  std::unique_lock lock(r.mutex);
  for (const auto group : r.groups) ::kill(-group, SIGTERM);
  // The threads running the children keep reading their output and reap them meanwhile.
  r.emptied.wait_for(lock, grace, [&] { return r.groups.empty(); });
  for (const auto group : r.groups) ::kill(-group, SIGKILL);
}

// First signal: nothing new starts and the running steps finish (a buildah killed between two
// steps leaves its containers mounted); a second one stops them.
[[noreturn]] void interrupted(int signal, const sigset_t& signals, std::chrono::milliseconds grace) {
  registry().stopping.store(true);
  if (const auto running = running_children(); running > 0) {
    say(fmt::format("hwimg: interrupted: letting {} running step{} finish; interrupt again to stop {} now\n", running,
                    running == 1 ? "" : "s", running == 1 ? "it" : "them"));
  }
  const timespec tick{0, 100'000'000};
  while (running_children() > 0) {
    if (::sigtimedwait(&signals, nullptr, &tick) > 0) {
      stop_children(grace);
      break;
    }
  }
  end_by(signal);
}

}  // namespace

InterruptForwarding::InterruptForwarding(std::chrono::milliseconds grace) : m_state(std::make_unique<State>()) {
  auto& state = *m_state;
  sigemptyset(&state.signals);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&state.signals, signal);
  pthread_sigmask(SIG_BLOCK, &state.signals, &state.previous);
  state.waiter = std::thread([&state, grace] {
    const timespec tick{0, 100'000'000};
    while (!state.done.load()) {
      const int signal = ::sigtimedwait(&state.signals, nullptr, &tick);
      if (signal > 0) interrupted(signal, state.signals, grace);
    }
  });
}

InterruptForwarding::~InterruptForwarding() {
  // After an interrupt the waiting thread ends the process, once the children are gone: the work
  // their failure failed does not end it first, with an error of its own.
  if (!child_groups::stopping()) m_state->done.store(true);
  m_state->waiter.join();
  pthread_sigmask(SIG_SETMASK, &m_state->previous, nullptr);
}

}  // namespace hwimg::util
