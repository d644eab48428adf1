#pragma once
// How a command that prints data prints it: for people (text) or for scripts (JSON, one document).

namespace hwimg::commands {

enum class DataFormat { text, json };

}  // namespace hwimg::commands
