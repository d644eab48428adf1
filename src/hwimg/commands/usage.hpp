#pragma once
// A mistake in what the user typed (a reference, a tag, a flag's value) exits 2, whatever library
// function found it: the same text in a recipe or a registry's answer stays an ordinary error.

#include "hwimg/util/error.hpp"

namespace hwimg::commands {

template <typename T>
[[nodiscard]] Result<T> as_usage_error(Result<T> result) {
  if (!result) return std::unexpected(Error{std::move(result).error().message, ExitCode::usage});
  return result;
}

}  // namespace hwimg::commands
