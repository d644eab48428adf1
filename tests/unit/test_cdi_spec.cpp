// `hwimg cdi generate`: the CDI spec for 1 and several GPUs, by index, UUID and `all`, device
// nodes only, hostPath under a device root; refusals (docs/running.md#cdi).

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "hwimg/cdi/spec.hpp"

using namespace hwimg;

namespace {

probe::HostFacts host_with_gpus(std::vector<std::string> uuids) {
  probe::HostFacts facts;
  probe::NvidiaFacts nvidia;
  nvidia.driver_version = "535.104.05";
  for (std::size_t i = 0; i < uuids.size(); ++i) {
    probe::GpuFacts gpu;
    gpu.index = static_cast<int>(i);
    gpu.uuid = uuids[i];
    gpu.name = "NVIDIA H100 80GB HBM3";
    nvidia.gpus.push_back(gpu);
  }
  facts.nvidia = nvidia;
  return facts;
}

nlohmann::json spec_of(const probe::HostFacts& host, const cdi::SpecOptions& options = {}) {
  const auto text = cdi::generate_spec(host, options);
  REQUIRE_MESSAGE(text.has_value(), text.error().message);
  CHECK(text->ends_with("}\n"));
  return nlohmann::json::parse(*text);
}

nlohmann::json nodes(std::initializer_list<const char*> paths) {
  auto out = nlohmann::json::array();
  for (const auto* path : paths) out.push_back({{"path", path}});
  return out;
}

}  // namespace

TEST_CASE("one GPU: devices 0, its UUID and all, each with its node; the control nodes shared") {
  const auto spec = spec_of(host_with_gpus({"GPU-5f2ab1c4-8e1d-4c6a-9b3e-0d1f2a3b4c5d"}));
  CHECK(spec["cdiVersion"] == "0.5.0");
  CHECK(spec["kind"] == "hwimg.org/gpu");
  const auto expected_devices = nlohmann::json::array({
      {{"name", "0"}, {"containerEdits", {{"deviceNodes", nodes({"/dev/nvidia0"})}}}},
      {{"name", "GPU-5f2ab1c4-8e1d-4c6a-9b3e-0d1f2a3b4c5d"},
       {"containerEdits", {{"deviceNodes", nodes({"/dev/nvidia0"})}}}},
      {{"name", "all"}, {"containerEdits", {{"deviceNodes", nodes({"/dev/nvidia0"})}}}},
  });
  CHECK(spec["devices"] == expected_devices);
  CHECK(spec["containerEdits"] ==
        nlohmann::json{{"deviceNodes", nodes({"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"})}});
  // Device nodes only: nothing of the host's driver is mounted, no hook runs.
  CHECK(spec.size() == 4);
  for (const auto& device : spec["devices"]) {
    CHECK(device["containerEdits"].size() == 1);
  }
}

TEST_CASE("several GPUs: one device each by index, then by UUID (where known), then all") {
  const auto spec = spec_of(host_with_gpus({"GPU-a", "", "GPU-c"}));
  std::vector<std::string> names;
  for (const auto& device : spec["devices"]) names.push_back(device["name"]);
  CHECK(names == std::vector<std::string>{"0", "1", "2", "GPU-a", "GPU-c", "all"});
  CHECK(spec["devices"][1]["containerEdits"]["deviceNodes"] == nodes({"/dev/nvidia1"}));
  CHECK(spec["devices"][4]["containerEdits"]["deviceNodes"] == nodes({"/dev/nvidia2"}));
  CHECK(spec["devices"][5]["containerEdits"]["deviceNodes"] ==
        nodes({"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2"}));
}

TEST_CASE("a device root other than / gives every node a hostPath under it; the container path stays") {
  const auto spec = spec_of(host_with_gpus({"GPU-a"}), {"/tmp/stand-in"});
  CHECK(spec["devices"][0]["containerEdits"]["deviceNodes"][0] ==
        nlohmann::json{{"path", "/dev/nvidia0"}, {"hostPath", "/tmp/stand-in/dev/nvidia0"}});
  CHECK(spec["containerEdits"]["deviceNodes"][2] ==
        nlohmann::json{{"path", "/dev/nvidia-uvm-tools"}, {"hostPath", "/tmp/stand-in/dev/nvidia-uvm-tools"}});
}

TEST_CASE("no GPU, a shared index or UUID, or a UUID CDI cannot name: refused") {
  CHECK(cdi::generate_spec(probe::HostFacts{}, {}).error().message ==
        "failed to generate CDI spec: the host has no NVIDIA GPU");
  CHECK(cdi::generate_spec(host_with_gpus({}), {}).error().message ==
        "failed to generate CDI spec: the host has no NVIDIA GPU");
  CHECK(cdi::generate_spec(host_with_gpus({"GPU-a", "GPU-a"}), {}).error().message ==
        "failed to generate CDI spec: two GPUs have UUID GPU-a");
  auto same_index = host_with_gpus({"GPU-a", "GPU-b"});
  same_index.nvidia->gpus[1].index = 0;
  CHECK(cdi::generate_spec(same_index, {}).error().message == "failed to generate CDI spec: two GPUs have index 0");
  CHECK(cdi::generate_spec(host_with_gpus({"GPU a/b"}), {}).error().message ==
        "failed to generate CDI spec: GPU 0's UUID 'GPU a/b' is not a CDI device name (letters, digits, and - _ . : "
        "inside)");
  CHECK(cdi::generate_spec(host_with_gpus({"GPU-a-"}), {}).has_value() == false);
}
