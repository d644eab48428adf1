#include "hwimg/matrix/matrix_file.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/hw/cuda_release.hpp"
#include "hwimg/hw/gpu_target.hpp"
#include "hwimg/hw/target_hints.hpp"
#include "hwimg/recipe/detail/yaml_reader.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::matrix {

namespace {

constexpr std::array<std::string_view, 6> top_keys{"axes", "exclude", "include", "ptx", "cuda_home", "gcc"};
constexpr std::array<std::string_view, 4> axis_keys{"cuda", "gpu", "cpu", "driver"};
constexpr std::array<std::string_view, 6> include_keys{"cuda", "gpu", "cpu", "driver", "ptx", "cuda_home"};

std::vector<std::string> strings_of(std::span<const std::string_view> names) {
  return {names.begin(), names.end()};
}

SourcePosition position_of(const YAML::Node& node) {
  const auto at = recipe::yaml::location_of(node, {});
  return {at.line, at.column};
}

std::string_view type_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a value";
    default: return "empty";
  }
}

// " (did you mean 12.6 or 12.8?)": the releases on either side, which edit distance cannot rank.
std::string neighbours(hw::CudaVersion version) {
  std::optional<hw::CudaVersion> below;
  std::optional<hw::CudaVersion> above;
  for (const auto& known : hw::cuda_toolkit_versions()) {
    if (known < version) {
      below = known;
    } else if (!above) {
      above = known;
    }
  }
  if (below && above) {
    return fmt::format(" (did you mean {} or {}?)", below->str(), above->str());
  }
  return fmt::format(" (did you mean {}?)", (below ? below : above)->str());
}

class Parser {
public:
  explicit Parser(MatrixFile& file) : m_file(file) {}

  void parse(const YAML::Node& root) {
    if (root.IsNull()) {
      error(root, "the matrix is empty");
      return;
    }
    if (!root.IsMap()) {
      error(root, fmt::format("the matrix must be a mapping, not {}", type_name(root)));
      return;
    }
    for (const auto& pair : root) {
      const auto key = pair.first.Scalar();
      const auto& value = pair.second;
      if (!known_key(pair.first, key, top_keys, "")) {
        continue;
      }
      if (key == "axes") {
        parse_axes(value);
      } else if (key == "exclude" || key == "include") {
        parse_entries(value, key, key == "exclude" ? m_file.exclude : m_file.include);
      } else if (key == "ptx") {
        if (const auto flag = parse_bool(value, "ptx")) {
          m_file.ptx = *flag;
        }
      } else if (key == "cuda_home") {
        m_file.cuda_home = parse_string(value, "cuda_home");
      } else if (key == "gcc") {
        m_file.gcc = parse_gcc(value);
      }
    }
  }

private:
  void error(const YAML::Node& node, const std::string& message) { error_at(position_of(node), message); }
  void error_at(SourcePosition at, const std::string& message) {
    m_file.errors.push_back(fmt::format("{}:{}:{}: {}", m_file.path, at.line, at.column, message));
  }

  bool known_key(const YAML::Node& key_node, const std::string& key, std::span<const std::string_view> keys,
                 std::string_view where) {
    if (std::ranges::find(keys, key) != keys.end()) {
      return true;
    }
    // An axis written at the top level, as a CI matrix (GitHub Actions' strategy.matrix) has it.
    const bool is_axis = where.empty() && std::ranges::find(axis_keys, key) != axis_keys.end();
    error(key_node, fmt::format("unknown key '{}'{}{}", key, where,
                                is_axis ? fmt::format(" (axes go under axes:, as in axes: {{{}: [...]}})", key)
                                        : util::did_you_mean(key, strings_of(keys))));
    return false;
  }

  std::optional<bool> parse_bool(const YAML::Node& node, std::string_view what) {
    if (node.IsScalar()) {
      const auto text = util::to_lower(node.Scalar());
      if (text == "true" || text == "false") {
        return text == "true";
      }
      error(node, fmt::format("{} must be true or false, not '{}'", what, node.Scalar()));
      return std::nullopt;
    }
    error(node, fmt::format("{} must be true or false, not {}", what, type_name(node)));
    return std::nullopt;
  }

  std::optional<MatrixValue> parse_string(const YAML::Node& node, std::string_view what) {
    if (!node.IsScalar() || node.Scalar().empty()) {
      error(node, fmt::format("{} must be a path, not {}", what, type_name(node)));
      return std::nullopt;
    }
    return MatrixValue{node.Scalar(), {node.Scalar()}, position_of(node), true};
  }

  std::optional<MatrixValue> parse_gcc(const YAML::Node& node) {
    if (!node.IsScalar() || !hw::parse_cuda_version(node.Scalar())) {
      error(node, fmt::format("gcc must be a version MAJOR.MINOR such as \"12.2\", not {}",
                              node.IsScalar() ? "'" + node.Scalar() + "'" : std::string(type_name(node))));
      return std::nullopt;
    }
    return MatrixValue{node.Scalar(), {node.Scalar()}, position_of(node), true};
  }

  void parse_axes(const YAML::Node& node) {
    if (!node.IsMap()) {
      error(node, fmt::format("axes must be a mapping of cuda, gpu, cpu and driver lists, not {}", type_name(node)));
      return;
    }
    std::array<std::optional<MatrixAxis>, axis_keys.size()> found;
    for (const auto& pair : node) {
      const auto key = pair.first.Scalar();
      if (!known_key(pair.first, key, axis_keys, " in axes")) {
        continue;
      }
      MatrixAxis axis{key, {}};
      if (pair.second.IsSequence()) {
        for (const auto& item : pair.second) {
          axis.values.push_back(parse_value(key, item));
        }
      } else if (pair.second.IsScalar()) {
        axis.values.push_back(parse_value(key, pair.second));
      } else {
        error(pair.second, fmt::format("axes.{} must be a list, not {}", key, type_name(pair.second)));
        continue;
      }
      if (axis.values.empty()) {
        error(pair.second, fmt::format("axes.{} is empty", key));
        continue;
      }
      report_duplicates(axis);
      found[static_cast<std::size_t>(std::ranges::find(axis_keys, key) - axis_keys.begin())] = std::move(axis);
    }
    for (auto& axis : found) {
      if (axis) {
        m_file.axes.push_back(std::move(*axis));
      }
    }
  }

  void report_duplicates(const MatrixAxis& axis) {
    for (std::size_t i = 0; i < axis.values.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (axis.values[i].valid && axis.values[j].valid && axis.values[i].text == axis.values[j].text) {
          error_at(axis.values[i].at, fmt::format("duplicate value '{}' in axes.{} (first at line {})",
                                                  axis.values[i].text, axis.key, axis.values[j].at.line));
          break;
        }
      }
    }
  }

  void parse_entries(const YAML::Node& node, const std::string& what, std::vector<MatrixCell>& cells) {
    if (!node.IsSequence()) {
      error(node, fmt::format("{} must be a list of mappings, not {}", what, type_name(node)));
      return;
    }
    const auto keys = what == "exclude" ? std::span<const std::string_view>(axis_keys)
                                        : std::span<const std::string_view>(include_keys);
    for (const auto& entry : node) {
      if (!entry.IsMap()) {
        error(entry, fmt::format("each {} entry must be a mapping, not {}", what, type_name(entry)));
        continue;
      }
      MatrixCell cell;
      for (const auto& pair : entry) {
        const auto key = pair.first.Scalar();
        if (!known_key(pair.first, key, keys, fmt::format(" in {}", what))) {
          continue;
        }
        if (key == "ptx") {
          if (const auto flag = parse_bool(pair.second, "ptx")) {
            cell[key] = MatrixValue{*flag ? "true" : "false", {}, position_of(pair.second), true};
          }
        } else if (key == "cuda_home") {
          if (auto home = parse_string(pair.second, "cuda_home")) {
            cell[key] = std::move(*home);
          }
        } else {
          cell[key] = parse_value(key, pair.second);
        }
      }
      if (cell.empty()) {
        error(entry, fmt::format("{} entry is empty", what));
        continue;
      }
      cells.push_back(std::move(cell));
    }
  }

  MatrixValue parse_value(std::string_view key, const YAML::Node& node) {
    MatrixValue value{{}, {}, position_of(node), true};
    if (key == "gpu" && node.IsSequence()) {
      for (const auto& item : node) {
        if (!item.IsScalar()) {
          error(item, fmt::format("a gpu list holds target names, not {}", type_name(item)));
          value.valid = false;
          continue;
        }
        value.items.push_back(item.Scalar());
      }
      if (value.items.empty() && value.valid) {
        error(node, "an empty gpu list (write none for a CPU-only variant)");
        value.valid = false;
      }
    } else if (node.IsScalar()) {
      value.items.push_back(node.Scalar());
    } else {
      error(node, fmt::format("{} must be a value, not {}", key, type_name(node)));
      value.valid = false;
    }
    if (value.valid) {
      check_names(key, node, value);
    }
    value.text = util::join(value.items, "+");
    return value;
  }

  // Checks each name against the knowledge tables and makes it canonical.
  void check_names(std::string_view key, const YAML::Node& node, MatrixValue& value) {
    if (key == "cuda") {
      const auto& text = value.items.front();
      const auto version = hw::parse_cuda_version(text);
      if (!version) {
        const auto hint = hw::parse_cuda_version(text + ".0") ? fmt::format(" (did you mean {}.0?)", text) : "";
        error(node, fmt::format("CUDA version '{}' must be MAJOR.MINOR{}", text, hint));
        value.valid = false;
      } else if (!hw::is_cuda_toolkit_version(*version)) {
        error(node, fmt::format("unknown CUDA toolkit version '{}'{}", text, neighbours(*version)));
        value.valid = false;
      }
    } else if (key == "gpu") {
      check_gpu_names(node, value);
    } else if (key == "driver") {
      check_driver_version(node, value);
    } else if (key == "cpu") {
      const auto& text = value.items.front();
      if (const auto* target = hw::find_cpu_target(text)) {
        value.items.front() = std::string(target->name);
      } else {
        error(node, fmt::format("unknown CPU target '{}'{}", text, hw::cpu_target_hint(text)));
        value.valid = false;
      }
    }
  }

  // NVIDIA's driver versions: "535.247.01", "570.86.15"; older branches had two numbers ("390.30").
  // `none`: the variant uses the host's driver, mounted by NVIDIA's toolkit, as without the axis.
  void check_driver_version(const YAML::Node& node, MatrixValue& value) {
    const auto& text = value.items.front();
    if (text == "none") return;
    const bool well_formed = hw::looks_like_driver_version(text) &&
                             std::ranges::all_of(util::split(text, '.'), [](const std::string& part) { return part.size() <= 4; });
    if (!well_formed || !hw::DriverVersion::parse(text)) {
      error(node, fmt::format("driver version '{}' must be NVIDIA's BRANCH.MINOR[.PATCH], such as 535.247.01", text));
      value.valid = false;
    } else if (!hw::cuda_version_of_driver(*hw::DriverVersion::parse(text))) {
      error(node, fmt::format("driver {} is older than any driver hwimg knows (branch 450, CUDA 11.0, is the oldest)",
                              text));
      value.valid = false;
    }
  }

  void check_gpu_names(const YAML::Node& node, MatrixValue& value) {
    const bool has_none = std::ranges::find(value.items, "none") != value.items.end();
    if (has_none && value.items.size() > 1) {
      error(node, "none cannot be listed with GPU targets");
      value.valid = false;
      return;
    }
    for (std::size_t i = 0; i < value.items.size() && !has_none; ++i) {
      const auto item_node = node.IsSequence() ? node[i] : node;
      auto target = hw::parse_gpu_target(value.items[i]);
      if (!target) {
        error(item_node, target.error().message);
        value.valid = false;
      }
    }
    if (value.valid && value.items.size() > 1) {
      std::vector<std::string> sorted = value.items;
      std::ranges::sort(sorted, [](const std::string& a, const std::string& b) {
        return *hw::parse_gpu_target(a) < *hw::parse_gpu_target(b);
      });
      if (std::ranges::adjacent_find(sorted) != sorted.end()) {
        error(node, "a gpu list names a target twice");
        value.valid = false;
      }
      value.items = std::move(sorted);
    }
  }

  MatrixFile& m_file;
};

}  // namespace

MatrixFile parse_matrix_text(std::string_view text, const std::filesystem::path& path) {
  MatrixFile file;
  file.path = path.string();
  file.directory = path.parent_path();
  try {
    const auto root = YAML::Load(std::string(text));
    Parser(file).parse(root);
  } catch (const YAML::Exception& e) {
    file.errors.push_back(fmt::format("{}:{}:{}: {}", file.path, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  return file;
}

Result<MatrixFile> read_matrix_file(const std::filesystem::path& path) {
  HWIMG_TRY_ASSIGN(const auto text, util::read_file(path));
  return parse_matrix_text(text, path);
}

}  // namespace hwimg::matrix
