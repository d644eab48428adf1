#include "hwimg/cdi/spec.hpp"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "hwimg/cdi/device_nodes.hpp"

namespace hwimg::cdi {
namespace {

using json = nlohmann::ordered_json;  // the keys in the order the CDI spec lists them

bool alphanumeric(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// The CDI library's rule for device names (pkg/cdi/qualified-device.go, ValidateDeviceName):
// letters and digits, and `-`, `_`, `.`, `:` inside.
bool valid_device_name(std::string_view name) {
  if (name.empty() || !alphanumeric(name.front()) || !alphanumeric(name.back())) {
    return false;
  }
  return std::ranges::all_of(name, [](char c) { return alphanumeric(c) || c == '-' || c == '_' || c == '.' || c == ':'; });
}

json device_node(std::string_view path, const SpecOptions& options) {
  json node{{"path", path}};
  if (options.device_root != "/") {
    node["hostPath"] = (options.device_root / path.substr(1)).string();
  }
  return node;
}

json device(std::string_view name, json nodes) {
  return {{"name", name}, {"containerEdits", {{"deviceNodes", std::move(nodes)}}}};
}

Result<void> check_names(const std::vector<probe::GpuFacts>& gpus) {
  std::set<int> indexes;
  std::set<std::string> uuids;
  for (const auto& gpu : gpus) {
    if (!indexes.insert(gpu.index).second) {
      return fail("two GPUs have index {}", gpu.index);
    }
    if (gpu.uuid.empty()) {
      continue;
    }
    if (!valid_device_name(gpu.uuid)) {
      return fail("GPU {}'s UUID '{}' is not a CDI device name (letters, digits, and - _ . : inside)", gpu.index,
                  gpu.uuid);
    }
    if (!uuids.insert(gpu.uuid).second) {
      return fail("two GPUs have UUID {}", gpu.uuid);
    }
  }
  return {};
}

}  // namespace

Result<std::string> generate_spec(const probe::HostFacts& host, const SpecOptions& options) {
  if (!host.nvidia || host.nvidia->gpus.empty()) {
    return fail("failed to generate CDI spec: the host has no NVIDIA GPU");
  }
  const auto& gpus = host.nvidia->gpus;
  HWIMG_TRY(with_context(check_names(gpus), "failed to generate CDI spec"));
  json devices = json::array();
  json every_node = json::array();
  for (const auto& gpu : gpus) {
    const auto node = device_node(gpu_node(gpu.index), options);
    devices.push_back(device(std::to_string(gpu.index), json::array({node})));
    every_node.push_back(node);
  }
  for (const auto& gpu : gpus) {
    if (!gpu.uuid.empty()) {
      devices.push_back(device(gpu.uuid, json::array({device_node(gpu_node(gpu.index), options)})));
    }
  }
  devices.push_back(device("all", std::move(every_node)));
  json shared = json::array();
  for (const auto path : control_nodes) {
    shared.push_back(device_node(path, options));
  }
  const json spec{{"cdiVersion", spec_version},
                  {"kind", kind},
                  {"devices", std::move(devices)},
                  {"containerEdits", {{"deviceNodes", std::move(shared)}}}};
  return spec.dump(2) + "\n";
}

}  // namespace hwimg::cdi
