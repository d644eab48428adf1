#pragma once
// --format text|json, shared by the commands that print data.

#include <string>

#include "choice_option.hpp"
#include "hwimg/commands/data_format.hpp"

namespace hwimg::cli {

// `text` says what text prints; `json` the document's shape.
inline void add_data_format_option(CLI::App& command, commands::DataFormat& format, const std::string& text,
                                   const std::string& json) {
  add_choice_option<commands::DataFormat>(command, "--format", format,
                                          {{"text", commands::DataFormat::text}, {"json", commands::DataFormat::json}},
                                          "text (" + text + ") or json (" + json + ")");
}

}  // namespace hwimg::cli
