#pragma once
// `hwimg probe`: what this host can run.

#include <filesystem>

#include "hwimg/commands/terminal_output.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::commands {

enum class ProbeFormat { json, text, nfd };
enum class CpuidDump { no, yes };

struct ProbeArguments {
  ProbeFormat format = ProbeFormat::json;
  std::filesystem::path output;  // empty: standard output; else written atomically
  Verbose verbose = Verbose::no;  // each probe step on stderr
  CpuidDump cpuid_dump = CpuidDump::no;
};

[[nodiscard]] Result<int> run_probe(const ProbeArguments& arguments);

}  // namespace hwimg::commands
