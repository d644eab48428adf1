#pragma once
// Every usage mistake in hwimg's own voice (docs/commands.md): one line "hwimg: error: ...", exit
// status 2, naming the nearest command or option; CLI11's help and version answers pass through.

#include <span>
#include <string>

#include <CLI/CLI.hpp>

namespace hwimg::cli {

// The line for `error`, raised while parsing `words` (argv without the program name) for `app`.
[[nodiscard]] std::string usage_message(const CLI::App& app, const CLI::ParseError& error,
                                        std::span<const std::string> words);

}  // namespace hwimg::cli
