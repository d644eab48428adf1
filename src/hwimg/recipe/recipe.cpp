#include "hwimg/recipe/recipe.hpp"

#include "hwimg/recipe/detail/yaml_reader.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::recipe {

std::string SourceLocation::str() const {
  return fmt::format("{}:{}:{}", file.string(), line, column);
}

namespace {

Result<ConfigSpec> parse_config(const YAML::Node& node, const std::filesystem::path& file) {
  HWIMG_TRY(yaml::expect_map(node, "config", file));
  HWIMG_TRY(yaml::check_keys(node, {"entrypoint", "cmd", "env", "workdir", "user", "labels", "exposed_ports", "stop_signal"},
                             "config", file));
  ConfigSpec config;
  for (const auto& item : node) {
    const auto key = item.first.Scalar();
    const auto& value = item.second;
    if (key == "entrypoint" || key == "cmd") {
      auto list = yaml::scalar_list(value, "config." + key, file);
      if (!list) return std::unexpected(list.error());
      (key == "entrypoint" ? config.entrypoint : config.cmd) = std::move(*list);
    } else if (key == "env" || key == "labels") {
      auto map = yaml::scalar_map(value, "config." + key, file);
      if (!map) return std::unexpected(map.error());
      (key == "env" ? config.env : config.labels) = std::move(*map);
    } else if (key == "exposed_ports") {
      auto list = yaml::scalar_list(value, "config.exposed_ports", file);
      if (!list) return std::unexpected(list.error());
      config.exposed_ports = std::move(*list);
    } else {
      auto text = yaml::scalar(value, "config." + key, file);
      if (!text) return std::unexpected(text.error());
      (key == "workdir" ? config.workdir : key == "user" ? config.user : config.stop_signal) = std::move(*text);
    }
  }
  return config;
}

Result<std::vector<LayerSpec>> parse_layers(const YAML::Node& node, const std::filesystem::path& file) {
  if (!node.IsSequence()) {
    return fail("{}: expected a list of {{from, to}} maps for \"layers\"", yaml::location_of(node, file).str());
  }
  if (node.size() == 0) {
    return fail("{}: expected at least one {{from, to}} map in \"layers\"", yaml::location_of(node, file).str());
  }
  std::vector<LayerSpec> layers;
  for (const auto& item : node) {
    HWIMG_TRY(yaml::expect_map(item, "layers[]", file));
    HWIMG_TRY(yaml::check_keys(item, {"from", "to"}, "a layer", file));
    for (const auto* required : {"from", "to"}) {
      if (!item[required]) {
        return fail("{}: missing key \"{}\" in a layer", yaml::location_of(item, file).str(), required);
      }
    }
    auto from = yaml::scalar(item["from"], "from", file);
    if (!from) return std::unexpected(from.error());
    auto to = yaml::scalar(item["to"], "to", file);
    if (!to) return std::unexpected(to.error());
    if (!to->value.starts_with('/')) {
      return fail("{}: expected an absolute path inside the image for \"to\", got \"{}\"", to->location.str(),
                  to->value);
    }
    layers.push_back({std::move(*from), std::move(*to)});
  }
  return layers;
}

}  // namespace

Result<Recipe> parse_recipe(std::string_view text, const std::filesystem::path& path) {
  auto root = yaml::load(text, path);
  if (!root) return std::unexpected(root.error());
  if (!root->IsMap()) {
    return fail("{}:1:1: expected a map with the keys name, base, build, layers, config", path.string());
  }
  HWIMG_TRY(yaml::check_keys(*root, {"name", "base", "matrix", "build", "layers", "config", "annotations"},
                             "the recipe", path));
  Recipe recipe;
  std::error_code ec;
  recipe.file = std::filesystem::absolute(path, ec);
  for (const auto* required : {"name", "base", "layers"}) {
    if (!(*root)[required]) {
      return fail("{}:1:1: missing key \"{}\" (expected e.g. {})", path.string(), required,
                  std::string_view(required) == "base" ? "\"base: scratch\"" : std::string_view(required) == "name" ? "\"name: app\"" : "\"layers: [{from: DIR, to: /PATH}]\"");
    }
  }
  for (const auto& item : *root) {
    const auto key = item.first.Scalar();
    const auto& value = item.second;
    if (key == "name" || key == "base" || key == "matrix") {
      auto text_value = yaml::scalar(value, key, path);
      if (!text_value) return std::unexpected(text_value.error());
      if (key == "name") recipe.name = text_value->value;
      else if (key == "base") recipe.base = std::move(*text_value);
      else recipe.matrix = std::move(*text_value);
    } else if (key == "build") {
      HWIMG_TRY(yaml::expect_map(value, "build", path));
      HWIMG_TRY(yaml::check_keys(value, {"workdir", "run"}, "build", path));
      if (!value["run"]) {
        return fail("{}: missing key \"run\" in build (the shell commands to run)", yaml::location_of(value, path).str());
      }
      BuildSpec build;
      auto run = yaml::scalar(value["run"], "build.run", path);
      if (!run) return std::unexpected(run.error());
      build.run = std::move(*run);
      build.workdir = LocatedString{".", yaml::location_of(value, path)};
      if (value["workdir"]) {
        auto workdir = yaml::scalar(value["workdir"], "build.workdir", path);
        if (!workdir) return std::unexpected(workdir.error());
        build.workdir = std::move(*workdir);
      }
      recipe.build = std::move(build);
    } else if (key == "layers") {
      auto layers = parse_layers(value, path);
      if (!layers) return std::unexpected(layers.error());
      recipe.layers = std::move(*layers);
    } else if (key == "config") {
      auto config = parse_config(value, path);
      if (!config) return std::unexpected(config.error());
      recipe.config = std::move(*config);
    } else if (key == "annotations") {
      auto annotations = yaml::scalar_map(value, "annotations", path);
      if (!annotations) return std::unexpected(annotations.error());
      recipe.annotations = std::move(*annotations);
    }
  }
  return recipe;
}

Result<Recipe> load_recipe(const std::filesystem::path& path) {
  auto text = util::read_file(path);
  if (!text) return std::unexpected(text.error().context("failed to load recipe"));
  return parse_recipe(*text, path);
}

}  // namespace hwimg::recipe
