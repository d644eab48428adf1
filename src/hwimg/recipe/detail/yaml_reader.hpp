#pragma once
// Internal to the recipe and matrix parsers (the one place that reads YAML positions): typed access
// to yaml-cpp nodes with precise errors.
// Included only from .cpp files, so yaml-cpp stays out of the public headers.

#include <initializer_list>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "hwimg/recipe/recipe.hpp"

namespace hwimg::recipe::yaml {

// 1-based line and column; 0:0 for a node yaml-cpp made rather than read.
[[nodiscard]] SourceLocation location_of(const YAML::Node& node, const std::filesystem::path& file);

// Fails with "file:line:col: unknown key "x" in <where> (did you mean y?)" for the first unknown key.
[[nodiscard]] Result<void> check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                                      std::string_view where, const std::filesystem::path& file);

[[nodiscard]] Result<LocatedString> scalar(const YAML::Node& node, std::string_view key,
                                           const std::filesystem::path& file);
[[nodiscard]] Result<std::vector<LocatedString>> scalar_list(const YAML::Node& node, std::string_view key,
                                                             const std::filesystem::path& file);
[[nodiscard]] Result<LocatedMap> scalar_map(const YAML::Node& node, std::string_view key,
                                            const std::filesystem::path& file);
// Fails at the key's position when a map entry has no value (`base:`): yaml-cpp places the empty
// value at the next token, often a later line.
[[nodiscard]] Result<void> expect_value(const YAML::Node& key_node, const YAML::Node& value, std::string_view key,
                                        const std::filesystem::path& file);
// Fails naming the node's position unless it is a map.
[[nodiscard]] Result<void> expect_map(const YAML::Node& node, std::string_view key, const std::filesystem::path& file);

[[nodiscard]] Result<YAML::Node> load(std::string_view text, const std::filesystem::path& file);

}  // namespace hwimg::recipe::yaml
