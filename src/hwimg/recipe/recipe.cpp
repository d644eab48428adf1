#include "hwimg/recipe/recipe.hpp"

#include <algorithm>
#include <cctype>

#include "hwimg/recipe/detail/yaml_reader.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::recipe {

std::string SourceLocation::str() const {
  // A value from the command line (hwimg build --dockerfile ...) is named by its flag alone.
  if (line == 0) return file.string();
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
      HWIMG_TRY_ASSIGN((key == "entrypoint" ? config.entrypoint : config.cmd),
                       yaml::scalar_list(value, "config." + key, file));
    } else if (key == "env" || key == "labels") {
      HWIMG_TRY_ASSIGN((key == "env" ? config.env : config.labels), yaml::scalar_map(value, "config." + key, file));
    } else if (key == "exposed_ports") {
      HWIMG_TRY_ASSIGN(config.exposed_ports, yaml::scalar_list(value, "config.exposed_ports", file));
    } else {
      HWIMG_TRY_ASSIGN((key == "workdir" ? config.workdir : key == "user" ? config.user : config.stop_signal),
                       yaml::scalar(value, "config." + key, file));
    }
  }
  return config;
}

// A name the shell can export, and not one hwimg sets for each variant itself.
Result<void> check_variable_name(const std::string& name, const SourceLocation& location, std::string_view key) {
  const bool valid = !name.empty() && (std::isdigit(static_cast<unsigned char>(name[0])) == 0) &&
                     std::all_of(name.begin(), name.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
                     });
  if (!valid) {
    return fail("{}: expected an environment variable name (letters, digits and _) in \"{}\", got \"{}\"",
                location.str(), key, name);
  }
  if (name.starts_with("HWIMG_") || name == "SOURCE_DATE_EPOCH") {
    return fail("{}: \"{}\" may not set {}: hwimg sets HWIMG_* and SOURCE_DATE_EPOCH for each variant",
                location.str(), key, name);
  }
  return {};
}

Result<void> check_step_environment(const BuildSpec& build) {
  for (const auto& [name, value] : build.env) HWIMG_TRY(check_variable_name(name, value.location, "build.env"));
  for (const auto& name : build.pass_env) HWIMG_TRY(check_variable_name(name.value, name.location, "build.pass_env"));
  return {};
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
    HWIMG_TRY_ASSIGN(auto from, yaml::scalar(item["from"], "from", file));
    HWIMG_TRY_ASSIGN(auto to, yaml::scalar(item["to"], "to", file));
    if (!to.value.starts_with('/')) {
      return fail("{}: expected an absolute path inside the image for \"to\", got \"{}\"", to.location.str(),
                  to.value);
    }
    layers.push_back({std::move(from), std::move(to)});
  }
  return layers;
}

Result<CpuVerify> parse_verify(const YAML::Node& node, const std::filesystem::path& file) {
  HWIMG_TRY(yaml::expect_map(node, "verify", file));
  HWIMG_TRY(yaml::check_keys(node, {"cpu"}, "verify", file));
  if (!node["cpu"]) {
    return fail("{}: missing key \"cpu\" in verify (strict, warn or off)", yaml::location_of(node, file).str());
  }
  HWIMG_TRY_ASSIGN(const auto cpu, yaml::scalar(node["cpu"], "verify.cpu", file));
  if (cpu.value == "strict") return CpuVerify::strict;
  if (cpu.value == "warn") return CpuVerify::warn;
  if (cpu.value == "off") return CpuVerify::off;
  return fail("{}: expected strict, warn or off for \"verify.cpu\", got \"{}\"", cpu.location.str(), cpu.value);
}

Result<DriverSpec> parse_driver(const YAML::Node& value, const std::filesystem::path& path) {
  HWIMG_TRY(yaml::expect_map(value, "driver", path));
  HWIMG_TRY(yaml::check_keys(value, {"from", "to"}, "driver", path));
  if (!value["from"]) {
    return fail("{}: missing key \"from\" in driver (the directory of the user-mode driver libraries, e.g. "
                "/opt/nvidia-drivers/${{driver.version}})",
                yaml::location_of(value, path).str());
  }
  DriverSpec driver;
  HWIMG_TRY_ASSIGN(driver.from, yaml::scalar(value["from"], "driver.from", path));
  driver.to = LocatedString{std::string(default_driver_directory), yaml::location_of(value, path)};
  if (value["to"]) {
    HWIMG_TRY_ASSIGN(driver.to, yaml::scalar(value["to"], "driver.to", path));
    if (!driver.to.value.starts_with('/')) {
      return fail("{}: expected an absolute path in the image for \"driver.to\", got \"{}\"", driver.to.location.str(),
                  driver.to.value);
    }
  }
  return driver;
}

}  // namespace

// name, matrix, dockerfile, context, target, args, annotations, verify: the Dockerfile is the rest.
Result<DockerfileSpec> parse_dockerfile_keys(const YAML::Node& root, const std::filesystem::path& path) {
  for (const auto* key : {"base", "build", "layers", "config"}) {
    if (root[key]) {
      return fail("{}: \"{}\" cannot be used with \"dockerfile\": the Dockerfile says how the image is built",
                  yaml::location_of(root[key], path).str(), key);
    }
  }
  DockerfileSpec spec;
  HWIMG_TRY_ASSIGN(spec.file, yaml::scalar(root["dockerfile"], "dockerfile", path));
  if (root["context"]) {
    HWIMG_TRY_ASSIGN(spec.context, yaml::scalar(root["context"], "context", path));
  }
  if (root["target"]) {
    HWIMG_TRY_ASSIGN(spec.target, yaml::scalar(root["target"], "target", path));
  }
  if (root["args"]) {
    HWIMG_TRY_ASSIGN(spec.args, yaml::scalar_map(root["args"], "args", path));
  }
  for (const auto& [name, value] : spec.args) {
    if (name.empty() || name.find_first_of("= \t") != std::string::npos) {
      return fail("{}: expected a build argument name (no '=' or blanks) in \"args\", got \"{}\"",
                  value.location.str(), name);
    }
  }
  return spec;
}

Result<Recipe> parse_recipe(std::string_view text, const std::filesystem::path& path) {
  HWIMG_TRY_ASSIGN(auto root, yaml::load(text, path));
  if (!root.IsMap()) {
    return fail("{}:1:1: expected a map with the keys name, base, build, layers, config (or name, dockerfile)",
                path.string());
  }
  HWIMG_TRY(yaml::check_keys(root, {"name", "base", "matrix", "build", "layers", "config", "annotations", "verify",
                                    "dockerfile", "context", "target", "args", "driver"},
                             "the recipe", path));
  Recipe recipe;
  std::error_code ec;
  recipe.file = std::filesystem::absolute(path, ec);
  if (root["dockerfile"]) {
    HWIMG_TRY_ASSIGN(recipe.dockerfile, parse_dockerfile_keys(root, path));
  } else {
    for (const auto* key : {"context", "target", "args"}) {
      if (root[key]) {
        return fail("{}: \"{}\" belongs to a Dockerfile recipe: add \"dockerfile: FILE\" or remove it",
                    yaml::location_of(root[key], path).str(), key);
      }
    }
  }
  const std::vector<const char*> required_keys =
      recipe.dockerfile ? std::vector<const char*>{"name"} : std::vector<const char*>{"name", "base", "layers"};
  for (const auto* required : required_keys) {
    if (!root[required]) {
      return fail("{}:1:1: missing key \"{}\" (expected e.g. {})", path.string(), required,
                  std::string_view(required) == "base" ? "\"base: scratch\"" : std::string_view(required) == "name" ? "\"name: app\"" : "\"layers: [{from: DIR, to: /PATH}]\"");
    }
  }
  for (const auto& item : root) {
    const auto key = item.first.Scalar();
    const auto& value = item.second;
    if (key == "dockerfile" || key == "context" || key == "target" || key == "args") continue;
    if (key == "name" || key == "base" || key == "matrix") {
      HWIMG_TRY_ASSIGN(auto text_value, yaml::scalar(value, key, path));
      if (key == "name") recipe.name = text_value.value;
      else if (key == "base") recipe.base = std::move(text_value);
      else recipe.matrix = std::move(text_value);
    } else if (key == "build") {
      HWIMG_TRY(yaml::expect_map(value, "build", path));
      HWIMG_TRY(yaml::check_keys(value, {"image", "workdir", "run", "env", "pass_env"}, "build", path));
      if (!value["run"]) {
        return fail("{}: missing key \"run\" in build (the shell commands to run)", yaml::location_of(value, path).str());
      }
      BuildSpec build;
      HWIMG_TRY_ASSIGN(build.run, yaml::scalar(value["run"], "build.run", path));
      build.workdir = LocatedString{".", yaml::location_of(value, path)};
      if (value["workdir"]) {
        HWIMG_TRY_ASSIGN(build.workdir, yaml::scalar(value["workdir"], "build.workdir", path));
      }
      if (value["image"]) {
        HWIMG_TRY_ASSIGN(build.image, yaml::scalar(value["image"], "build.image", path));
        if (build.image->value.empty()) {
          return fail("{}: expected an image reference for \"build.image\" (e.g. \"debian:12\" or \"oci:DIR:TAG\")",
                      build.image->location.str());
        }
      }
      if (value["env"]) {
        HWIMG_TRY_ASSIGN(build.env, yaml::scalar_map(value["env"], "build.env", path));
      }
      if (value["pass_env"]) {
        HWIMG_TRY_ASSIGN(build.pass_env, yaml::scalar_list(value["pass_env"], "build.pass_env", path));
      }
      HWIMG_TRY(check_step_environment(build));
      recipe.build = std::move(build);
    } else if (key == "layers") {
      HWIMG_TRY_ASSIGN(recipe.layers, parse_layers(value, path));
    } else if (key == "config") {
      HWIMG_TRY_ASSIGN(recipe.config, parse_config(value, path));
    } else if (key == "annotations") {
      HWIMG_TRY_ASSIGN(recipe.annotations, yaml::scalar_map(value, "annotations", path));
    } else if (key == "verify") {
      HWIMG_TRY_ASSIGN(recipe.verify_cpu, parse_verify(value, path));
    } else if (key == "driver") {
      HWIMG_TRY_ASSIGN(recipe.driver, parse_driver(value, path));
    }
  }
  return recipe;
}

Result<Recipe> load_recipe(const std::filesystem::path& path) {
  HWIMG_TRY_ASSIGN(const auto text, with_context(util::read_file(path), "failed to load recipe"));
  return parse_recipe(text, path);
}

}  // namespace hwimg::recipe
