#include "hwimg/util/process.hpp"

#include <cerrno>
#include <csignal>

#include <fcntl.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "hwimg/util/fd.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/interrupts.hpp"
#include "hwimg/util/pipe_reader.hpp"

extern char** environ;

namespace hwimg::util {
namespace {

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& extra,
                                            ParentEnvironment parent) {
  std::vector<std::string> result;
  for (char** entry = parent == ParentEnvironment::inherited ? environ : nullptr; entry != nullptr && *entry != nullptr;
       ++entry) {
    const std::string_view text(*entry);
    const auto name = text.substr(0, text.find('='));
    if (!extra.contains(std::string(name))) {
      result.emplace_back(text);
    }
  }
  for (const auto& [name, value] : extra) {
    result.push_back(name + "=" + value);
  }
  return result;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) {
    pointers.push_back(s.data());
  }
  pointers.push_back(nullptr);
  return pointers;
}

// A child's group, known to InterruptForwarding from its start until it has been reaped.
class ChildGroup {
public:
  explicit ChildGroup(pid_t group) : m_group(group) {
    if (!child_groups::add(group)) ::kill(-group, SIGTERM);
  }
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;
  ~ChildGroup() { child_groups::remove(m_group); }

private:
  pid_t m_group;
};

}  // namespace

Result<ProcessResult> run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) {
    return fail("failed to run a process: empty command");
  }
  if (child_groups::stopping()) return fail("failed to start {}: hwimg is being interrupted", spec.argv[0]);
  const bool separate = spec.standard_error == StandardError::separate;
  UniqueFd output_read, output_write, error_read, error_write, input_read, input_write;
  const auto make_pipe = [&](UniqueFd& read_end, UniqueFd& write_end) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read_end = UniqueFd(fds[0]);
    write_end = UniqueFd(fds[1]);
    return true;
  };
  if (!make_pipe(output_read, output_write) || !make_pipe(input_read, input_write) ||
      (separate && !make_pipe(error_read, error_write))) {
    return fail("failed to create a pipe for {}: {}", spec.argv[0], errno_text(errno));
  }

  auto argv_strings = spec.argv;
  auto env_strings = merged_environment(spec.environment, spec.parent_environment);
  auto argv = c_strings(argv_strings);
  auto envp = c_strings(env_strings);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    return fail("failed to start {}: {}", spec.argv[0], errno_text(errno));
  }
  if (pid == 0) {
    // Own process group, so a timeout kills the whole pipeline the command started.
    ::setpgid(0, 0);
    // Not outliving hwimg (killed itself, say): the child is stopped instead of left running in a
    // group the terminal's Ctrl-C does not reach. Ctrl-C itself is InterruptForwarding's.
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != parent) ::_exit(126);
    // What hwimg blocks or ignores for itself (InterruptForwarding, broken pipes) is not the child's:
    // a buildah with SIGTERM blocked could not be stopped.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (spec.standard_input) {
      ::dup2(input_read.get(), STDIN_FILENO);
    } else {
      const int null_fd = ::open("/dev/null", O_RDONLY);
      ::dup2(null_fd, STDIN_FILENO);
    }
    ::dup2(output_write.get(), STDOUT_FILENO);
    ::dup2(separate ? error_write.get() : output_write.get(), STDERR_FILENO);
    if (!spec.working_directory.empty() && ::chdir(spec.working_directory.c_str()) != 0) {
      ::_exit(126);
    }
    ::execvpe(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  // Also here, so that the group exists before anyone signals it, whichever process runs first.
  ::setpgid(pid, pid);
  const ChildGroup group(pid);
  output_write.reset();
  error_write.reset();
  input_read.reset();
  if (spec.standard_input) {
    // Small inputs only (passwords, scripts): a pipe buffer holds them without a writer thread.
    const auto& data = *spec.standard_input;
    ::signal(SIGPIPE, SIG_IGN);
    if (::write(input_write.get(), data.data(), data.size()) < 0 && errno != EPIPE) {
      ::kill(-pid, SIGKILL);
    }
  }
  input_write.reset();

  ProcessResult result;
  const auto deadline = spec.timeout ? std::chrono::steady_clock::now() + *spec.timeout
                                     : std::chrono::steady_clock::time_point::max();
  // Echoed whole lines at a time, each in one write, so children run at once (and a child's two
  // streams) do not mix lines.
  const auto echo = [&spec](std::string& partial_line, std::string_view data, bool flush) {
    partial_line += data;
    if (flush && !partial_line.empty() && partial_line.back() != '\n') partial_line += '\n';
    std::size_t start = 0;
    for (auto end = partial_line.find('\n'); end != std::string::npos; end = partial_line.find('\n', start)) {
      const auto line = spec.echo_prefix + partial_line.substr(start, end + 1 - start);
      [[maybe_unused]] const auto ignored = ::write(STDERR_FILENO, line.data(), line.size());
      start = end + 1;
    }
    partial_line.erase(0, start);
  };
  std::string partial_lines[2];
  const auto capture = [&](std::string& into, std::string& partial_line) {
    return [&spec, &echo, &into, &partial_line](std::string_view data) {
      if (spec.echo_output) echo(partial_line, data, false);
      into += data;
      if (into.size() > spec.max_output) into.erase(0, into.size() - spec.max_output);
    };
  };
  std::vector<PipeSource> sources{{output_read.get(), capture(result.output, partial_lines[0])}};
  if (separate) sources.push_back({error_read.get(), capture(result.error_output, partial_lines[1])});
  const auto read = read_pipes_until(sources, deadline);
  if (spec.echo_output) {
    for (auto& partial_line : partial_lines) echo(partial_line, "", true);
  }
  if (read.end == PipeEnd::timed_out) {
    result.timed_out = true;
    ::kill(-pid, SIGKILL);
  }
  if (read.end == PipeEnd::failed) {
    // The child must not be left writing to a pipe nobody reads.
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return fail("failed to read the output of {}: {}", spec.argv[0], errno_text(read.error_number));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return fail("failed to wait for {}: {}", spec.argv[0], errno_text(errno));
    }
  }
  if (WIFEXITED(status)) {
    result.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_status = 128 + WTERMSIG(status);
  }
  if (result.exit_status == 127 && result.output.empty() && result.error_output.empty()) {
    return fail("failed to run {}: command not found", spec.argv[0]);
  }
  return result;
}

}  // namespace hwimg::util
