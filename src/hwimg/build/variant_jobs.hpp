#pragma once
// The variants of one build worked on up to -j at once, and every variant's error reported
// together, each on a line of its own, rather than only the first.

#include <algorithm>
#include <future>
#include <string>
#include <vector>

#include "hwimg/util/error.hpp"
#include "hwimg/util/strings.hpp"
#include "hwimg/util/thread_pool.hpp"

namespace hwimg::build {

// Runs `task` on each of `items`, up to `jobs` at once; every result, in the items' order.
template <typename T, typename Items, typename Task>
[[nodiscard]] std::vector<Result<T>> run_each(Items& items, unsigned jobs, Task task) {
  std::vector<std::future<Result<T>>> futures;
  {
    util::ThreadPool pool(std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(items.size()))));
    for (auto& item : items) futures.push_back(pool.submit([&task, &item]() { return task(item); }));
  }
  std::vector<Result<T>> results;
  for (auto& future : futures) results.push_back(future.get());
  return results;
}

// Nothing when `errors` is empty, else one error of them all ("hwimg: error: " before each line
// after the first, which main prefixes).
[[nodiscard]] inline Result<void> fail_with_all(const std::vector<std::string>& errors) {
  if (errors.empty()) return {};
  return std::unexpected(Error{util::join_at_most(errors, "\nhwimg: error: ", util::max_listed_errors)});
}

// The values of `results` in order, or every error among them.
template <typename T>
[[nodiscard]] Result<std::vector<T>> all_or_errors(std::vector<Result<T>> results) {
  std::vector<T> values;
  std::vector<std::string> errors;
  for (auto& result : results) {
    if (result) {
      values.push_back(std::move(*result));
    } else {
      errors.push_back(result.error().message);
    }
  }
  HWIMG_TRY(fail_with_all(errors));
  return values;
}

// Nothing, or every error among `results`.
[[nodiscard]] inline Result<void> all_or_errors(const std::vector<Result<void>>& results) {
  std::vector<std::string> errors;
  for (const auto& result : results) {
    if (!result) errors.push_back(result.error().message);
  }
  return fail_with_all(errors);
}

}  // namespace hwimg::build
