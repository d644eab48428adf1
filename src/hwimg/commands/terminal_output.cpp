#include "hwimg/commands/terminal_output.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "hwimg/commands/environment.hpp"

namespace hwimg::commands {

TerminalOutput::TerminalOutput(Progress progress, Verbose verbose)
    : m_progress(progress),
      m_verbose(verbose),
      m_show_status(progress == Progress::shown && verbose == Verbose::no && stderr_is_terminal()),
      m_show_notices(verbose == Verbose::yes || stderr_is_terminal()) {}

TerminalOutput::~TerminalOutput() {
  clear_status();
}

void TerminalOutput::write(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

void TerminalOutput::progress(std::string_view line) {
  // --verbose asks for everything: progress too, when no terminal watches.
  if (m_progress == Progress::hidden && m_verbose == Verbose::no) return;
  std::lock_guard lock(m_mutex);
  write(fmt::format("{}{}\n", m_status_shown ? "\r\033[K" : "", line));
  m_status_shown = false;
}

void TerminalOutput::status(std::string_view line) {
  if (!m_show_status) return;
  std::lock_guard lock(m_mutex);
  write(fmt::format("\r\033[K{}", line));
  m_status_shown = true;
}

void TerminalOutput::clear_status() {
  std::lock_guard lock(m_mutex);
  if (!m_status_shown) return;
  write("\r\033[K");
  m_status_shown = false;
}

void TerminalOutput::warning(std::string_view line) {
  std::lock_guard lock(m_mutex);
  write(fmt::format("{}hwimg: warning: {}\n", m_status_shown ? "\r\033[K" : "", line));
  m_status_shown = false;
}

void TerminalOutput::notice(std::string_view line) {
  if (!m_show_notices) return;
  std::lock_guard lock(m_mutex);
  write(fmt::format("{}hwimg: {}\n", m_status_shown ? "\r\033[K" : "", line));
  m_status_shown = false;
}

void TerminalOutput::log(std::string_view line) {
  if (m_verbose == Verbose::no) return;
  std::lock_guard lock(m_mutex);
  write(fmt::format("hwimg: {}\n", line));
}

}  // namespace hwimg::commands
