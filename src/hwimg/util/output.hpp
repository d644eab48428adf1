#pragma once
// Where library code sends what is not its result (ninja's Status, ccache's LOG): progress for a
// person watching, warnings, and --verbose detail. Commands choose the implementation; library code
// never prints, so tests can capture or silence all of it.

#include <string_view>

namespace hwimg::util {

class Output {
public:
  virtual ~Output() = default;

  // A step worth a line of its own for a person watching ("building cpu-x86-64-v3...").
  virtual void progress(std::string_view line) = 0;
  // A transient line the next one replaces (a push's byte counter), until clear_status().
  virtual void status(std::string_view line) = 0;
  virtual void clear_status() = 0;
  virtual void warning(std::string_view line) = 0;
  // Why a person at a terminal is kept waiting (a registry that refused the connection, retried
  // in 1 s): shown where stderr is a terminal or with --verbose, never in a pipeline's log.
  virtual void notice(std::string_view line) = 0;
  // Detail asked for with --verbose: each HTTP exchange, each probe step.
  virtual void log(std::string_view line) = 0;
  // Whether log() lines are shown, so callers can skip formatting them.
  [[nodiscard]] virtual bool logging() const = 0;
};

// Discards everything: the default of every library option that takes an Output.
[[nodiscard]] Output& null_output();

}  // namespace hwimg::util
