#include "hwimg/build/device_code_check.hpp"

#include <algorithm>
#include <map>

#include "hwimg/image/layer_files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

namespace {

bool capability_in(const std::vector<hw::CapabilityRange>& ranges, hw::ComputeCapability capability) {
  return std::ranges::any_of(ranges, [&](const hw::CapabilityRange& range) {
    return range.min <= capability && (!range.max_exclusive || capability < *range.max_exclusive);
  });
}

std::vector<hw::CapabilityRange> ranges_of(std::span<const hw::GpuTarget> targets) {
  std::vector<hw::CapabilityRange> ranges;
  for (const auto& target : targets) std::ranges::move(hw::served_capabilities(target), std::back_inserter(ranges));
  return ranges;
}

std::string target_list(std::span<const hw::GpuTarget> targets) {
  std::vector<std::string> names;
  for (const auto& target : targets) names.push_back(target.name());
  return names.empty() ? "no device code" : util::join(names, ", ");
}

std::string capability_list(std::span<const hw::ComputeCapability> capabilities) {
  std::vector<std::string> names;
  for (const auto& capability : capabilities) names.push_back(capability.str());
  return util::join(names, ", ");
}

// The targets of every module of one file together: a library such as cuBLAS keeps
// architecture-specific kernels in modules of their own and picks them by the device it runs on.
std::map<fs::path, std::vector<hw::GpuTarget>> targets_per_file(const hw::DeviceCodeScan& scan) {
  std::map<fs::path, std::vector<hw::GpuTarget>> files;
  for (const auto& [file, module] : scan.modules) {
    auto& targets = files[file];
    targets.insert(targets.end(), module.targets.begin(), module.targets.end());
  }
  for (auto& [file, targets] : files) {
    std::ranges::sort(targets);
    targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  }
  return files;
}

// The first few findings, the rest counted.
std::string unserved_description(const std::vector<std::string>& found) {
  constexpr std::size_t listed = 4;
  std::vector<std::string> shown(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(std::min(found.size(), listed)));
  return util::join(shown, "; ") + (found.size() > listed ? fmt::format("; and {} more", found.size() - listed) : "");
}

}  // namespace

std::vector<hw::ComputeCapability> unserved_capabilities(std::span<const hw::GpuTarget> declared,
                                                         std::span<const hw::GpuTarget> have) {
  const auto wanted = ranges_of(declared);
  const auto served = ranges_of(have);
  // Coverage only changes at a range's ends, so checking each end checks every capability.
  std::vector<hw::ComputeCapability> points;
  for (const auto& range : wanted) {
    points.push_back(range.min);
    if (range.max_exclusive) points.push_back(*range.max_exclusive);
  }
  for (const auto& range : served) {
    points.push_back(range.min);
    if (range.max_exclusive) points.push_back(*range.max_exclusive);
  }
  std::ranges::sort(points);
  points.erase(std::unique(points.begin(), points.end()), points.end());
  std::vector<hw::ComputeCapability> missing;
  for (const auto& point : points) {
    if (capability_in(wanted, point) && !capability_in(served, point)) missing.push_back(point);
  }
  return missing;
}

Result<hw::DeviceCodeScan> scan_layer_blob(const fs::path& blob, std::string_view layer_name) {
  hw::DeviceCodeScan scan;
  const auto wanted = [](std::string_view path, std::span<const std::byte> head) {
    return hw::device_file_kind(head, path.substr(path.rfind('/') + 1)) != hw::DeviceFileKind::none;
  };
  const auto visit = [&](std::string_view path, std::string_view bytes) -> Result<void> {
    const auto name = fmt::format("/{} in layer {}", path, layer_name);
    const auto data = std::as_bytes(std::span(bytes.data(), bytes.size()));
    const auto kind = hw::device_file_kind(data.first(std::min<std::size_t>(data.size(), 20)), path.substr(path.rfind('/') + 1));
    HWIMG_TRY_ASSIGN(auto code, hw::read_device_code(data, kind, name));
    if (!code.modules.empty()) scan.files.emplace_back(name);
    for (auto& module : code.modules) scan.modules.push_back({name, std::move(module)});
    for (const auto& target : code.relocatable_only) scan.relocatable_only.emplace_back(name, target);
    return {};
  };
  HWIMG_TRY(image::read_layer_files(blob, std::string(layer_name), wanted, visit));
  return scan;
}

Result<SharedScan> DeviceCodeCheck::scan_once(const std::string& key,
                                              const std::function<Result<hw::DeviceCodeScan>()>& scan) {
  return m_scans.get(key, [&]() -> Result<SharedScan> {
    HWIMG_TRY_ASSIGN(auto result, scan());
    return std::make_shared<const hw::DeviceCodeScan>(std::move(result));
  });
}

Result<void> DeviceCodeCheck::check(const VariantPlan& plan, const BaseImage& base,
                                    std::span<const fs::path> base_files) {
  const auto& variant = *plan.variant;
  const auto context = fmt::format("failed to check the device code of variant {}", variant.id);
  const auto& declared = variant.gpu_targets;
  hw::DeviceCodeScan own;
  std::vector<std::string> unserved;  // shared modules and base files that lack a declared GPU
  for (const auto& layer : plan.layers) {
    if (layer.variant_specific) {
      HWIMG_TRY_ASSIGN(auto scan, with_context(hw::scan_device_code(layer.from), context));
      own.append(std::move(scan));
      continue;
    }
    HWIMG_TRY_ASSIGN(const auto shared, with_context(scan_once("shared " + layer.from.string() + "\n" + layer.to,
                                                               [&] { return hw::scan_device_code(layer.from); }),
                                                     context));
    for (const auto& [file, module] : shared->modules) {
      if (const auto missing = unserved_capabilities(declared, module.targets); !missing.empty()) {
        unserved.push_back(fmt::format("{} ({}, in a layer every variant shares) has {}: no code for compute "
                                       "capability {}",
                                       file.string(), module.where, target_list(module.targets),
                                       capability_list(missing)));
      }
    }
  }
  for (const auto& layer : plan.built_layers) {
    HWIMG_TRY_ASSIGN(auto scan, with_context(scan_layer_blob(layer.file, built_layer_name(layer)), context));
    own.append(std::move(scan));
  }
  for (std::size_t i = 0; i < base_files.size() && i < base.layers.size(); ++i) {
    const auto& digest = base.layers[i].digest;
    HWIMG_TRY_ASSIGN(const auto scan, with_context(scan_once("layer " + digest.str(),
                                                             [&] { return scan_layer_blob(base_files[i], digest.str()); }),
                                                   context));
    for (const auto& [file, targets] : targets_per_file(*scan)) {
      if (const auto missing = unserved_capabilities(declared, targets); !missing.empty()) {
        unserved.push_back(fmt::format("{} (base {}) has {}: no code for compute capability {}",
                                       file.string(), base.reference, target_list(targets), capability_list(missing)));
      }
    }
  }
  if (!unserved.empty()) {
    return fail("{}: it declares {}, but not all device code in its image runs where that does: {}", context,
                target_list(declared), unserved_description(unserved));
  }
  return hw::check_device_code(variant.id, declared, own);
}

}  // namespace hwimg::build
