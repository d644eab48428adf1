#pragma once
// The error type every library function returns through std::expected.

#include <expected>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace hwimg {

enum class ExitCode : int { success = 0, failure = 1, usage = 2, no_match = 3 };

struct Error {
  std::string message;
  ExitCode exit_code = ExitCode::failure;

  // Wraps a lower-level cause: "failed to read manifest: <cause>".
  [[nodiscard]] Error context(std::string_view what) const {
    return Error{fmt::format("{}: {}", what, message), exit_code};
  }
};

template <typename T>
using Result = std::expected<T, Error>;

template <typename... Args>
[[nodiscard]] std::unexpected<Error> fail(fmt::format_string<Args...> format, Args&&... args) {
  return std::unexpected(Error{fmt::format(format, std::forward<Args>(args)...)});
}

template <typename... Args>
[[nodiscard]] std::unexpected<Error> fail_usage(fmt::format_string<Args...> format, Args&&... args) {
  return std::unexpected(Error{fmt::format(format, std::forward<Args>(args)...), ExitCode::usage});
}

// Adds context to the error of a failed result, passing success through.
template <typename T>
[[nodiscard]] Result<T> with_context(Result<T> result, std::string_view what) {
  if (!result) {
    return std::unexpected(result.error().context(what));
  }
  return result;
}

}  // namespace hwimg

// Returns the error of a failed Result<...> expression from the enclosing function.
#define HWIMG_TRY(expression) HWIMG_TRY_IMPL(expression, HWIMG_TRY_CONCAT(hwimg_try_result_, __COUNTER__))
#define HWIMG_TRY_CONCAT_INNER(a, b) a##b
#define HWIMG_TRY_CONCAT(a, b) HWIMG_TRY_CONCAT_INNER(a, b)
#define HWIMG_TRY_IMPL(expression, name)                  \
  do {                                                    \
    if (auto name = (expression); !name) {                \
      return std::unexpected(std::move(name).error());    \
    }                                                     \
  } while (false)

// Evaluates a Result<T> expression and assigns its value to `target` (which may be a declaration,
// `auto x`), or returns its error from the enclosing function (ccache's TRY_ASSIGN).
#define HWIMG_TRY_ASSIGN(target, expression) \
  HWIMG_TRY_ASSIGN_IMPL(target, expression, HWIMG_TRY_CONCAT(hwimg_try_result_, __COUNTER__))
#define HWIMG_TRY_ASSIGN_IMPL(target, expression, name)  \
  auto name = (expression);                              \
  if (!name) {                                           \
    return std::unexpected(std::move(name).error());     \
  }                                                      \
  target = std::move(*name)
