#pragma once
// `hwimg probe`: what this host can run.

#include <filesystem>

#include "hwimg/commands/terminal_output.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::commands {

// automatic: text for a person at a terminal, JSON when written to a pipe or file (as `gh` does),
// so `hwimg probe > node.json` writes the facts select --host reads.
enum class ProbeFormat { automatic, json, text, nfd };
enum class CpuidDump { no, yes };

struct ProbeArguments {
  ProbeFormat format = ProbeFormat::automatic;
  std::filesystem::path output;  // empty: standard output; else written atomically
  Verbose verbose = Verbose::no;  // each probe step on stderr
  CpuidDump cpuid_dump = CpuidDump::no;
};

[[nodiscard]] Result<int> run_probe(const ProbeArguments& arguments);

}  // namespace hwimg::commands
