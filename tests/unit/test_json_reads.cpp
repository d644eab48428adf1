// JSON that others wrote (registry answers, token answers, OCI documents, credential helpers, host
// facts, caches on disk) is read only through util/json_reader: typed lookups that answer a
// mistyped field with an error, where nlohmann's get<>(), value() and at() throw type_error
// (issue 23, F1: one such exception ended `serve`). This test keeps it that way.

#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "hwimg/util/files.hpp"

namespace fs = std::filesystem;

TEST_CASE("values come out of JSON only through util/json_reader") {
  const auto source_dir = fs::path(HWIMG_TEST_DATA_DIR) / ".." / ".." / "src";
  const std::regex taking(R"((\.|->)(get<|get_to\(|value\(\"|at\(\"))");
  std::vector<std::string> found;
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir)) {
    if (!entry.is_regular_file() || (entry.path().extension() != ".cpp" && entry.path().extension() != ".hpp")) continue;
    if (entry.path().filename() == "json_reader.cpp") continue;
    ++files;
    const auto text = hwimg::util::read_file(entry.path());
    REQUIRE(text);
    std::size_t line_number = 0;
    std::size_t start = 0;
    while (start <= text->size()) {
      const auto end = std::min(text->find('\n', start), text->size());
      const auto line = text->substr(start, end - start);
      ++line_number;
      if (std::regex_search(line, taking)) {
        found.push_back(fs::relative(entry.path(), source_dir).string() + ":" + std::to_string(line_number) + ": " + line);
      }
      start = end + 1;
    }
  }
  CHECK(files > 100);
  std::string all;
  for (const auto& line : found) all += line + "\n";
  INFO("use util::json::string_member, as_string and the like instead:\n", all);
  CHECK(found.empty());
}
