#include "hwimg/recipe/detail/yaml_reader.hpp"

#include <algorithm>
#include <map>

#include "hwimg/util/strings.hpp"

namespace hwimg::recipe::yaml {
namespace {

std::string_view kind_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a string";
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Undefined: return "nothing";
  }
  return "something else";
}

}  // namespace

Result<void> expect_value(const YAML::Node& key_node, const YAML::Node& value, std::string_view key,
                          const std::filesystem::path& file) {
  if (value.IsNull()) {
    return fail("{}: \"{}\" has no value", location_of(key_node, file).str(), key);
  }
  return {};
}

SourceLocation location_of(const YAML::Node& node, const std::filesystem::path& file) {
  const auto mark = node.Mark();
  return SourceLocation{file, mark.line + 1, mark.column + 1};
}

Result<void> check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed,
                        std::string_view where, const std::filesystem::path& file) {
  std::vector<std::string> names(allowed.begin(), allowed.end());
  std::map<std::string, SourceLocation> seen;
  for (const auto& item : map) {
    const auto key = item.first.Scalar();
    const auto at = location_of(item.first, file);
    // yaml-cpp keeps both copies of a repeated key; the image would silently use one of them.
    if (const auto [it, inserted] = seen.emplace(key, at); !inserted) {
      return fail("{}: duplicate key \"{}\" in {} (first at {}:{})", at.str(), key, where, it->second.line,
                  it->second.column);
    }
    if (std::ranges::find(names, key) == names.end()) {
      return fail("{}: unknown key \"{}\" in {}{}", location_of(item.first, file).str(), key, where,
                  util::did_you_mean(key, names));
    }
    HWIMG_TRY(expect_value(item.first, item.second, key, file));
  }
  return {};
}

Result<void> expect_map(const YAML::Node& node, std::string_view key, const std::filesystem::path& file) {
  if (!node.IsMap()) {
    return fail("{}: expected a map for \"{}\", got {}", location_of(node, file).str(), key, kind_name(node));
  }
  return {};
}

Result<LocatedString> scalar(const YAML::Node& node, std::string_view key, const std::filesystem::path& file) {
  if (!node.IsScalar()) {
    return fail("{}: expected a string for \"{}\", got {}", location_of(node, file).str(), key, kind_name(node));
  }
  return LocatedString{node.Scalar(), location_of(node, file)};
}

Result<std::vector<LocatedString>> scalar_list(const YAML::Node& node, std::string_view key,
                                               const std::filesystem::path& file) {
  if (!node.IsSequence()) {
    return fail("{}: expected a list of strings for \"{}\", got {}", location_of(node, file).str(), key,
                kind_name(node));
  }
  std::vector<LocatedString> out;
  for (const auto& item : node) {
    HWIMG_TRY_ASSIGN(out.emplace_back(), scalar(item, key, file));
  }
  return out;
}

Result<LocatedMap> scalar_map(const YAML::Node& node, std::string_view key, const std::filesystem::path& file) {
  HWIMG_TRY(expect_map(node, key, file));
  LocatedMap out;
  for (const auto& item : node) {
    const auto name = fmt::format("{}.{}", key, item.first.Scalar());
    HWIMG_TRY(expect_value(item.first, item.second, name, file));
    HWIMG_TRY_ASSIGN(auto value, scalar(item.second, name, file));
    out.emplace_back(item.first.Scalar(), std::move(value));
  }
  return out;
}

Result<YAML::Node> load(std::string_view text, const std::filesystem::path& file) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return fail("{}:{}:{}: invalid YAML: {}", file.string(), e.mark.line + 1, e.mark.column + 1, e.msg);
  }
}

}  // namespace hwimg::recipe::yaml
