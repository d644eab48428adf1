#pragma once
// The Output every command uses: stderr, as a person reads it. Progress lines where someone
// watches or with --verbose, status lines only where someone watches, warnings always, log lines
// with --verbose.

#include <mutex>

#include "hwimg/util/output.hpp"

namespace hwimg::commands {

enum class Progress { hidden, shown };
enum class Verbose { no, yes };

class TerminalOutput final : public util::Output {
public:
  // Status lines need Progress::shown, a terminal on stderr and no --verbose logs to mix with.
  TerminalOutput(Progress progress, Verbose verbose);
  ~TerminalOutput() override;

  void progress(std::string_view line) override;
  void status(std::string_view line) override;
  void clear_status() override;
  void warning(std::string_view line) override;
  void notice(std::string_view line) override;
  void log(std::string_view line) override;
  [[nodiscard]] bool logging() const override { return m_verbose == Verbose::yes; }

private:
  void write(std::string_view text);

  Progress m_progress;
  Verbose m_verbose;
  bool m_show_status;
  bool m_show_notices;
  bool m_status_shown = false;
  std::mutex m_mutex;  // build variants report from several threads
};

}  // namespace hwimg::commands
