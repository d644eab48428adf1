// docs/architecture.md's table of areas, read from the page itself so the rule and the code cannot
// drift apart: each area under src/hwimg/ (and src/cli) includes hwimg headers only from itself and
// from the areas its "may use" column names; another area's detail/ header only where that column
// names the header's path. Every area folder has its row.

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

using namespace hwimg;
namespace fs = std::filesystem;

namespace {

const fs::path source_dir = fs::path(HWIMG_TEST_DATA_DIR) / ".." / "..";

struct AreaRule {
  std::set<std::string> areas;           // whose public headers it may include
  std::set<std::string> detail_headers;  // other areas' detail/ headers it may include, as "area/detail/x.hpp"
};

// The rows of the table under "## Areas": `area` | holds | may use. "every area above" is every
// area of an earlier row.
std::map<std::string, AreaRule> layering_table(const std::string& page) {
  const auto start = page.find("\n## Areas");
  REQUIRE_MESSAGE(start != std::string::npos, "docs/architecture.md has no \"## Areas\" section");
  const auto end = page.find("\n#", start + 1);
  std::istringstream section(page.substr(start, end - start));
  const std::regex row(R"(^\| `([^`]+)` \|.*\| ([^|]*) \|\s*$)");
  const std::regex quoted("`([^`]+)`");
  std::map<std::string, AreaRule> rules;
  std::vector<std::string> above;
  for (std::string line; std::getline(section, line);) {
    std::smatch match;
    if (!std::regex_match(line, match, row)) continue;
    const std::string area = match[1];
    const std::string may_use = match[2];
    AreaRule rule;
    if (may_use.find("every area above") != std::string::npos) rule.areas.insert(above.begin(), above.end());
    for (std::sregex_iterator it(may_use.begin(), may_use.end(), quoted), none; it != none; ++it) {
      const std::string name = (*it)[1];
      if (name.find("/detail/") != std::string::npos) {
        rule.detail_headers.insert(name);
      } else {
        rule.areas.insert(name);
      }
    }
    rules.emplace(area, std::move(rule));
    above.push_back(area);
  }
  return rules;
}

struct Include {
  fs::path file;  // relative to the source directory
  int line = 0;
  std::string header;  // as included: "oci/layout.hpp", the part after "hwimg/"
};

std::vector<Include> hwimg_includes(const fs::path& directory) {
  const std::regex include(R"(^\s*#\s*include\s*"hwimg/([^"]+)\")");
  std::vector<Include> includes;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir / directory)) {
    const auto extension = entry.path().extension();
    if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".hpp")) continue;
    const auto text = util::read_file(entry.path());
    REQUIRE_MESSAGE(text, entry.path().string());
    std::istringstream lines(*text);
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      std::smatch match;
      if (std::regex_search(line, match, include)) {
        includes.push_back({fs::relative(entry.path(), source_dir), number, match[1]});
      }
    }
  }
  return includes;
}

// What is wrong with `area` including `header`, or "" when nothing is.
std::string violation(const std::string& area, const std::string& header, const AreaRule& rule) {
  const auto slash = header.find('/');
  if (slash == std::string::npos) return "not in an area's folder";
  const auto included_area = header.substr(0, slash);
  if (included_area == area) return "";
  if (header.find("/detail/") != std::string::npos) {
    if (rule.detail_headers.contains(header)) return "";
    return "another area's detail/ header (docs/architecture.md#areas lists it under " + area + "'s \"may use\" when "
           "it is meant)";
  }
  if (rule.areas.contains(included_area)) return "";
  return area + " may not use " + included_area + " (docs/architecture.md#areas)";
}

}  // namespace

TEST_CASE("every area includes only what docs/architecture.md's table lets it use") {
  const auto page = util::read_file(source_dir / "docs/architecture.md");
  REQUIRE(page);
  const auto rules = layering_table(*page);
  REQUIRE(rules.contains("util"));
  REQUIRE(rules.contains("commands"));
  REQUIRE(rules.contains("src/cli"));

  std::vector<std::pair<std::string, fs::path>> areas{{"src/cli", "src/cli"}};
  for (const auto& entry : fs::directory_iterator(source_dir / "src/hwimg")) {
    if (!entry.is_directory()) continue;
    const auto area = entry.path().filename().string();
    CHECK_MESSAGE(rules.contains(area), "src/hwimg/", area, " has no row in docs/architecture.md's table of areas");
    areas.emplace_back(area, fs::path("src/hwimg") / area);
  }

  std::vector<std::string> violations;
  for (const auto& [area, directory] : areas) {
    const auto rule = rules.find(area);
    if (rule == rules.end()) continue;
    for (const auto& include : hwimg_includes(directory)) {
      if (const auto why = violation(area, include.header, rule->second); !why.empty()) {
        violations.push_back(include.file.string() + ":" + std::to_string(include.line) + ": includes \"hwimg/" +
                             include.header + "\": " + why);
      }
    }
  }
  CHECK_MESSAGE(violations.empty(), util::join(violations, "\n"));
}

TEST_CASE("the layering table reads as the page writes it") {
  const auto rules = layering_table("intro\n\n## Areas\n\n| area | holds | may use |\n|---|---|---|\n"
                                    "| `util` | errors | the standard library |\n"
                                    "| `oci` | documents | `util` |\n"
                                    "| `matrix` | matrices | `util`, `oci`, `recipe` (its `recipe/detail/yaml.hpp`) |\n"
                                    "| `commands` | subcommands | every area above |\n\n### Layering\n"
                                    "| `ignored` | after the table | `util` |\n");
  REQUIRE(rules.size() == 4);
  CHECK(rules.at("util").areas.empty());
  CHECK(rules.at("oci").areas == std::set<std::string>{"util"});
  CHECK(rules.at("matrix").areas == std::set<std::string>{"util", "oci", "recipe"});
  CHECK(rules.at("matrix").detail_headers == std::set<std::string>{"recipe/detail/yaml.hpp"});
  CHECK(rules.at("commands").areas == std::set<std::string>{"util", "oci", "matrix"});

  const auto& matrix = rules.at("matrix");
  CHECK(violation("matrix", "matrix/variant.hpp", matrix).empty());
  CHECK(violation("matrix", "oci/layout.hpp", matrix).empty());
  CHECK(violation("matrix", "recipe/detail/yaml.hpp", matrix).empty());
  CHECK(violation("matrix", "recipe/detail/other.hpp", matrix).starts_with("another area's detail/ header"));
  CHECK(violation("oci", "matrix/variant.hpp", rules.at("oci")) == "oci may not use matrix (docs/architecture.md#areas)");
}
