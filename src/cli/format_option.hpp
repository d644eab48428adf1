#pragma once
// --format text|json, shared by the commands that print data.

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "hwimg/commands/data_format.hpp"

namespace hwimg::cli {

// `text` says what text prints; `json` the document's shape.
inline void add_data_format_option(CLI::App& command, commands::DataFormat& format, const std::string& text,
                                   const std::string& json) {
  static const std::map<std::string, commands::DataFormat> names{{"text", commands::DataFormat::text},
                                                                 {"json", commands::DataFormat::json}};
  command.add_option("--format", format, "text (" + text + ") or json (" + json + ")")
      ->transform(CLI::CheckedTransformer(names))
      ->default_str("text");
}

}  // namespace hwimg::cli
