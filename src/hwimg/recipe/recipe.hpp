#pragma once
// Recipe files (docs/recipe.md): what to build, which directories become layers, the image config.
// Strings keep their file position so every later error can name file:line:column.

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hwimg/util/error.hpp"

namespace hwimg::recipe {

struct SourceLocation {
  std::filesystem::path file;
  int line = 0;    // 1-based; 0: not in a file (`file` then names a command-line flag)
  int column = 0;  // 1-based

  [[nodiscard]] std::string str() const;
};

struct LocatedString {
  std::string value;
  SourceLocation location;
};

using LocatedMap = std::vector<std::pair<std::string, LocatedString>>;

struct LayerSpec {
  LocatedString from;
  LocatedString to;
};

struct BuildSpec {
  LocatedString workdir;  // relative to the recipe; defaults to the recipe's directory
  LocatedString run;
  // The image whose root filesystem the step runs in (docs/recipe.md#build-image); none: the host.
  std::optional<LocatedString> image;
  LocatedMap env;                      // set for the step, variables substituted
  std::vector<LocatedString> pass_env;  // names passed from hwimg's own environment when set there
};

struct ConfigSpec {
  std::optional<std::vector<LocatedString>> entrypoint;
  std::optional<std::vector<LocatedString>> cmd;
  LocatedMap env;
  std::optional<LocatedString> workdir;
  std::optional<LocatedString> user;
  LocatedMap labels;
  std::vector<LocatedString> exposed_ports;
  std::optional<LocatedString> stop_signal;
};

// A Dockerfile as the recipe (docs/recipe.md#bring-your-dockerfile): buildah builds it once per
// variant with the build arguments `args`, whose values may use ${...} variables.
struct DockerfileSpec {
  LocatedString file;                     // relative to the recipe
  std::optional<LocatedString> context;   // relative to the recipe; unset: the Dockerfile's directory
  std::optional<LocatedString> target;    // the stage to build; unset: the last one
  LocatedMap args;
};

// The user-mode NVIDIA driver a variant bundles (docs/recipe.md#bundled-driver): the libraries of
// the matrix's driver version, read from a directory, packed as one layer.
struct DriverSpec {
  LocatedString from;  // a directory; may use ${driver.version} and ${driver.branch}
  LocatedString to;    // the library directory in the image
};

inline constexpr std::string_view default_driver_directory = "/usr/local/nvidia/lib64";

// How the builder checks the CPU code of a variant's layers (docs/recipe.md#cpu-code).
enum class CpuVerify { strict, warn, off };

struct Recipe {
  std::filesystem::path file;  // absolute
  std::string name;
  LocatedString base;          // "scratch", "oci:DIR:TAG" or a registry reference; unused with a Dockerfile
  std::optional<DockerfileSpec> dockerfile;  // instead of base, build, layers and config
  std::optional<LocatedString> matrix;
  std::optional<BuildSpec> build;
  std::vector<LayerSpec> layers;
  ConfigSpec config;
  LocatedMap annotations;
  std::optional<DriverSpec> driver;
  // verify.cpu; unset: strict for the variant's own layers, warn for the layers every variant shares.
  std::optional<CpuVerify> verify_cpu;

  [[nodiscard]] std::filesystem::path directory() const { return file.parent_path(); }
  // A path named in the recipe: relative ones are relative to the recipe file.
  [[nodiscard]] std::filesystem::path resolve(const std::filesystem::path& path) const {
    return (path.is_absolute() ? path : directory() / path).lexically_normal();
  }
};

[[nodiscard]] Result<Recipe> load_recipe(const std::filesystem::path& path);
// `text` is the recipe's YAML; `path` names it in messages and anchors its relative paths.
[[nodiscard]] Result<Recipe> parse_recipe(std::string_view text, const std::filesystem::path& path);

}  // namespace hwimg::recipe
