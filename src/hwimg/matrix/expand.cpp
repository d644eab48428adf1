#include "hwimg/matrix/expand.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "hwimg/hw/cpu_targets.hpp"
#include "hwimg/hw/gpu_flags.hpp"
#include "hwimg/hw/nvidia_require.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::matrix {

namespace key = oci::annotation;

namespace {

struct Combination {
  MatrixCell cell;
  std::set<std::string, std::less<>> original;  // keys whose values came from the axes
};

bool all_valid(const MatrixCell& cell) {
  return std::ranges::all_of(cell, [](const auto& pair) { return pair.second.valid; });
}

const MatrixValue* value_of(const MatrixCell& cell, std::string_view key) {
  const auto found = cell.find(key);
  return found == cell.end() ? nullptr : &found->second;
}

// GitHub Actions: an include entry extends a combination when it changes none of the
// combination's original (axis) values.
bool extends(const Combination& combination, const MatrixCell& entry) {
  return std::ranges::all_of(entry, [&](const auto& pair) {
    const auto* current = value_of(combination.cell, pair.first);
    return !combination.original.contains(pair.first) || current->text == pair.second.text;
  });
}

std::string location(const MatrixFile& file, SourcePosition at) {
  return fmt::format("{}:{}:{}", file.path, at.line, at.column);
}

std::string id_part(const std::vector<std::string>& targets) {
  std::vector<std::string> parts;
  for (auto name : targets) {
    std::erase(name, '_');
    parts.push_back(name);
  }
  return util::join(parts, "_");
}

// The deepest generic target `target` descends from: its psABI level, or an Arm architecture level.
const hw::CpuTarget& generic_level(const hw::CpuTarget& target) {
  const hw::CpuTarget* best = &target;
  if (target.is_generic()) {
    return target;
  }
  std::size_t depth = 0;
  for (const auto& candidate : hw::cpu_targets()) {
    if (candidate.is_generic() && candidate.arch == target.arch && hw::descends_from(target, candidate.name) &&
        (best == &target || hw::ancestor_count(candidate) > depth)) {
      best = &candidate;
      depth = hw::ancestor_count(candidate);
    }
  }
  return *best;
}

struct Unsupported {
  SourcePosition at;
  std::string reason;
};

class VariantBuilder {
public:
  VariantBuilder(const MatrixFile& file, hw::CudaVersion gcc, std::filesystem::path cuda_root)
      : m_file(file), m_gcc(gcc), m_cuda_root(std::move(cuda_root)) {}

  // The variant, or why it cannot be built; hard errors (not skippable) go to `errors`.
  std::optional<Variant> build(const MatrixCell& cell, std::vector<Unsupported>& unsupported,
                               std::vector<std::string>& errors) const {
    Variant variant;
    const auto* cpu_value = value_of(cell, "cpu");
    const auto* gpu_value = value_of(cell, "gpu");
    const auto* cuda_value = value_of(cell, "cuda");
    const bool uses_gpu = gpu_value && gpu_value->items.front() != "none";

    const auto& cpu = *hw::find_cpu_target(cpu_value ? cpu_value->items.front() : "x86-64-v1");
    set_cpu(variant, cpu);
    const auto cpu_at = cpu_value ? cpu_value->at : (gpu_value ? gpu_value->at : SourcePosition{});
    if (const auto march = hw::gcc_flags(cpu, m_gcc.major, m_gcc.minor)) {
      variant.cpu_march = *march;
    } else {
      // Every row has GCC flags (test_hw_cpu_target_table.cpp); a new one without them still reads sensibly.
      const auto reason = cpu.gcc.empty()
                              ? fmt::format("hwimg knows no GCC flags for {}", cpu.name)
                              : fmt::format("GCC {} cannot build for {} (it needs GCC {}.{} or newer; set gcc in the "
                                            "matrix to the version the recipe uses)",
                                            m_gcc.str(), cpu.name, cpu.gcc.back().major, cpu.gcc.back().minor);
      unsupported.push_back({cpu_at, reason});
    }

    std::string gpu_id;
    if (uses_gpu) {
      for (const auto& name : gpu_value->items) {
        variant.gpu_targets.push_back(*hw::parse_gpu_target(name));
      }
      gpu_id = id_part(gpu_value->items);
      add_ptx(variant, cell);
      if (!cuda_value) {
        errors.push_back(fmt::format("{}: variant {}: GPU targets need a CUDA version (add a cuda axis or a cuda "
                                     "key)",
                                     location(m_file, gpu_value->at), make_id(variant, gpu_id)));
        return std::nullopt;
      }
      variant.cuda = hw::parse_cuda_version(cuda_value->items.front());
      for (const auto& target : variant.gpu_targets) {
        if (auto supported = hw::check_toolkit_supports(*variant.cuda, target); !supported) {
          unsupported.push_back({gpu_value->at, supported.error().message});
        }
      }
      variant.cuda_home = cuda_home(cell, *variant.cuda);
      if (value_of(cell, "cuda_home") || m_file.cuda_home) variant.cuda_home_origin = CudaHomeOrigin::matrix;
      variant.nvidia_require_cuda = hw::nvidia_require_cuda(*variant.cuda, variant.gpu_targets);
      if (const auto* driver = value_of(cell, "driver"); driver && driver->items.front() != "none") {
        variant.bundled_driver = hw::DriverVersion::parse(driver->items.front());
        if (auto runs = driver_runs_toolkit(*variant.bundled_driver, *variant.cuda); !runs) {
          unsupported.push_back({driver->at, runs.error().message});
        }
      }
    }
    variant.id = make_id(variant, gpu_id);
    finish(variant);
    return variant;
  }

private:
  static void set_cpu(Variant& variant, const hw::CpuTarget& cpu) {
    const auto& level = generic_level(cpu);
    if (cpu.arch == hw::CpuArch::amd64) {
      variant.cpu_level = hw::x86_level_name(cpu.level);
      variant.platform = {"linux", "amd64", hw::oci_variant(cpu.level)};
    } else {
      variant.cpu_level = std::string(level.name);
      variant.platform = {"linux", "arm64", "v8"};
    }
    if (!cpu.is_generic()) {
      variant.cpu_target = std::string(cpu.name);
      const auto base = cpu.arch == hw::CpuArch::amd64 ? hw::x86_level_features(cpu.level) : level.features;
      for (const auto& feature : cpu.features) {
        if (hw::is_instruction_set_feature(feature) && !base.contains(feature)) {
          variant.cpu_features.push_back(feature);
        }
      }
    }
  }

  // `ptx: true` adds the baseline PTX of the highest target: compute_90 for sm_90a, since
  // compute_90a would JIT only on 9.0, which the SASS already serves.
  void add_ptx(Variant& variant, const MatrixCell& cell) const {
    const auto* ptx = value_of(cell, "ptx");
    if (!(ptx ? ptx->text == "true" : m_file.ptx)) {
      return;
    }
    auto& targets = variant.gpu_targets;
    std::ranges::sort(targets);
    const hw::GpuTarget added{hw::CodeKind::ptx, targets.back().capability, hw::ArchFeatures::baseline};
    if (std::ranges::find(targets, added) == targets.end()) {
      targets.push_back(added);
      std::ranges::sort(targets);
    }
  }

  std::filesystem::path cuda_home(const MatrixCell& cell, hw::CudaVersion version) const {
    const auto* value = value_of(cell, "cuda_home");
    if (!value && !m_file.cuda_home) {
      return m_cuda_root / fmt::format("cuda-{}", version.str());
    }
    auto text = (value ? *value : *m_file.cuda_home).text;
    for (std::size_t at; (at = text.find("${cuda.version}")) != std::string::npos;) {
      text.replace(at, std::string_view("${cuda.version}").size(), version.str());
    }
    const std::filesystem::path path(text);
    return path.is_absolute() ? path : (m_file.directory / path).lexically_normal();
  }

  // A bundled driver must run the toolkit's code itself: natively or by minor-version
  // compatibility (docs/selection.md#rule-4-cuda-driver), judged as on a host with that driver.
  static Result<void> driver_runs_toolkit(const hw::DriverVersion& driver, hw::CudaVersion toolkit) {
    const auto driver_cuda = *hw::cuda_version_of_driver(driver);
    if (hw::cuda_compatibility(toolkit, driver_cuda, driver) != hw::CudaCompatibility::none) {
      return {};
    }
    const auto floor = hw::minor_compat_floor(toolkit.major);
    return fail("driver {} (CUDA {}) cannot run CUDA {} code: it needs a driver of CUDA {}.x's range{} "
                "(docs/compatibility.md#cuda-driver-floors)",
                driver.str(), driver_cuda.str(), toolkit.str(), toolkit.major,
                floor ? fmt::format(", from {} on", floor->str()) : "");
  }

  // CPU-only variants ignore the driver axis: there is nothing for a driver to run.
  static std::string make_id(const Variant& variant, const std::string& gpu_id) {
    const auto& cpu = variant.cpu_target.empty() ? variant.cpu_level : variant.cpu_target;
    if (gpu_id.empty()) {
      return "cpu-" + cpu;
    }
    auto id = variant.cuda ? fmt::format("cuda{}-{}", variant.cuda->str(), gpu_id) : gpu_id;
    id += "-" + cpu;
    if (variant.bundled_driver) id += "-driver" + variant.bundled_driver->str();
    return id;
  }

  static void finish(Variant& variant) {
    auto& a = variant.annotations;
    a[std::string(key::variant)] = variant.id;
    a[std::string(key::cpu_level)] = variant.cpu_level;
    if (!variant.cpu_target.empty()) {
      a[std::string(key::cpu_target)] = variant.cpu_target;
    }
    if (!variant.cpu_features.empty()) {
      a[std::string(key::cpu_features)] = util::join(variant.cpu_features, ",");
    }
    const auto targets = hw::join_target_names(variant.gpu_targets);
    if (variant.uses_gpu()) {
      a[std::string(key::cuda_version)] = variant.cuda->str();
      a[std::string(key::gpu_targets)] = targets;
    }
    if (variant.bundled_driver) {
      a[std::string(key::driver_bundled)] = variant.bundled_driver->str();
    }
    variant.variables = {
        {"variant", variant.id},
        {"cuda.version", variant.cuda && variant.uses_gpu() ? variant.cuda->str() : ""},
        {"cuda.home", variant.uses_gpu() ? variant.cuda_home.string() : ""},
        {"gpu.targets", targets},
        {"gpu.gencode", hw::nvcc_gencode_flags(variant.gpu_targets)},
        {"gpu.cmake", hw::cmake_cuda_architectures(variant.gpu_targets)},
        {"cpu.level", variant.cpu_level},
        {"cpu.target", variant.cpu_target},
        {"cpu.march", variant.cpu_march},
        {"driver.version", variant.bundled_driver ? variant.bundled_driver->str() : ""},
        {"driver.branch", variant.bundled_driver ? std::to_string(variant.bundled_driver->branch()) : ""},
    };
  }

  const MatrixFile& m_file;
  hw::CudaVersion m_gcc;
  std::filesystem::path m_cuda_root;
};

std::vector<Combination> combine_axes(const MatrixFile& file) {
  std::vector<Combination> combinations;
  if (file.axes.empty()) {
    return combinations;
  }
  combinations.emplace_back();
  for (const auto& axis : file.axes) {
    std::vector<Combination> next;
    for (const auto& combination : combinations) {
      for (const auto& value : axis.values) {
        auto extended = combination;
        extended.cell[axis.key] = value;
        extended.original.insert(axis.key);
        next.push_back(std::move(extended));
      }
    }
    combinations = std::move(next);
  }
  return combinations;
}

void apply_exclude(const MatrixFile& file, std::vector<Combination>& combinations, MatrixReport& report) {
  for (const auto& entry : file.exclude) {
    const auto not_axis = std::ranges::find_if(entry, [&](const auto& pair) {
      return std::ranges::none_of(file.axes, [&](const MatrixAxis& axis) { return axis.key == pair.first; });
    });
    if (not_axis != entry.end()) {
      report.errors.push_back(fmt::format("{}: exclude key '{}' is not an axis of this matrix",
                                          location(file, not_axis->second.at), not_axis->first));
      continue;
    }
    if (!all_valid(entry)) {
      continue;
    }
    const auto removed = std::erase_if(combinations, [&](const Combination& combination) {
      return std::ranges::all_of(entry, [&](const auto& pair) {
        return value_of(combination.cell, pair.first)->text == pair.second.text;
      });
    });
    if (removed == 0) {
      report.warnings.push_back(
          fmt::format("{}: exclude entry matches no combination", location(file, entry.begin()->second.at)));
    }
  }
}

void apply_include(const MatrixFile& file, std::vector<Combination>& combinations) {
  const auto originals = combinations.size();
  for (const auto& entry : file.include) {
    if (!all_valid(entry)) {
      continue;
    }
    bool extended = false;
    for (std::size_t i = 0; i < originals; ++i) {
      if (extends(combinations[i], entry)) {
        for (const auto& [key, value] : entry) {
          combinations[i].cell[key] = value;
        }
        extended = true;
      }
    }
    if (!extended) {
      combinations.push_back({entry, {}});
    }
  }
}

}  // namespace

MatrixReport expand_matrix(const MatrixFile& file, const ExpandOptions& options) {
  const auto skip = options.skip;
  MatrixReport report;
  report.errors = file.errors;
  auto combinations = combine_axes(file);
  apply_exclude(file, combinations, report);
  apply_include(file, combinations);
  if (combinations.empty() && file.errors.empty()) {
    report.errors.push_back(fmt::format("{}:1:1: the matrix has no variants (no axes, or all excluded)", file.path));
  }

  const auto gcc = hw::parse_cuda_version(file.gcc ? file.gcc->text : std::string(default_gcc_version));
  const VariantBuilder builder(file, gcc.value_or(hw::CudaVersion{12, 2}), options.cuda_root);
  std::map<std::string, SourcePosition, std::less<>> seen;
  for (const auto& combination : combinations) {
    if (!all_valid(combination.cell)) {
      continue;
    }
    std::vector<Unsupported> unsupported;
    auto variant = builder.build(combination.cell, unsupported, report.errors);
    if (!variant) {
      continue;
    }
    const auto* gpu = value_of(combination.cell, "gpu");
    const auto at = gpu ? gpu->at : combination.cell.begin()->second.at;
    if (const auto previous = seen.find(variant->id); previous != seen.end()) {
      if (variant->uses_gpu()) {
        report.errors.push_back(fmt::format("{}: duplicate variant {} (first from line {})", location(file, at),
                                            variant->id, previous->second.line));
      }
      continue;
    }
    seen.emplace(variant->id, at);
    for (const auto& problem : unsupported) {
      const auto line = fmt::format("{}: {}variant {}: {}", location(file, problem.at),
                                    skip == SkipUnsupported::yes ? "skipped " : "", variant->id, problem.reason);
      (skip == SkipUnsupported::yes ? report.warnings : report.errors).push_back(line);
    }
    if (unsupported.empty()) {
      report.variants.push_back(std::move(*variant));
    }
  }
  return report;
}

Result<MatrixReport> check_matrix(const std::filesystem::path& path, const ExpandOptions& options) {
  HWIMG_TRY_ASSIGN(const auto file,
                   with_context(read_matrix_file(path), fmt::format("failed to load matrix {}", path.string())));
  return expand_matrix(file, options);
}

Result<MatrixExpansion> load_matrix(const std::filesystem::path& path, const ExpandOptions& options) {
  HWIMG_TRY_ASSIGN(auto report, check_matrix(path, options));
  if (!report.errors.empty()) {
    return fail("failed to load matrix {}: {} error{}:\n{}", path.string(), report.errors.size(),
                report.errors.size() == 1 ? "" : "s", util::join_at_most(report.errors, "\n", util::max_listed_errors));
  }
  return MatrixExpansion{std::move(report.variants), std::move(report.warnings)};
}

Result<Variant> portable_variant(hw::CpuArch arch) {
  MatrixFile file;
  file.path = "(portable variant)";
  const std::string cpu = arch == hw::CpuArch::arm64 ? "aarch64" : "x86-64-v1";
  file.axes.push_back({"cpu", {MatrixValue{cpu, {cpu}, {}, true}}});
  auto report = expand_matrix(file, {});
  if (!report.errors.empty() || report.variants.size() != 1) {
    return fail("failed to plan the portable variant: {}", util::join(report.errors, "; "));
  }
  return std::move(report.variants.front());
}

}  // namespace hwimg::matrix
