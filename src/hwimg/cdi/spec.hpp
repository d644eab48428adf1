#pragma once
// The Container Device Interface spec `hwimg cdi generate` writes for bundled-driver variants
// (docs/running.md#cdi): kind hwimg.org/gpu, one device per GPU by index and by UUID, and `all`,
// each with its GPU's device node; the control nodes shared by all. Device nodes only: no mounts,
// no hooks, so nothing of the host's driver enters the container.

#include <filesystem>
#include <string>
#include <string_view>

#include "hwimg/probe/host_facts.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::cdi {

inline constexpr std::string_view kind = "hwimg.org/gpu";
// The newest version the CDI library of Debian 12's podman 4.3 (0.5.2) accepts, and the first
// with hostPath (docs/running.md#cdi).
inline constexpr std::string_view spec_version = "0.5.0";

struct SpecOptions {
  // Where the host's /dev lives: "/" on a node. Any other (absolute) directory, for tests with
  // stand-in nodes, gives every node the hostPath DIR/dev/...; the container path stays /dev/....
  std::filesystem::path device_root = "/";
};

// The spec as JSON, which YAML readers read too, ending in a newline. Fails when the host has
// no GPU, when two GPUs share an index or a UUID, or when a UUID is not a CDI device name.
[[nodiscard]] Result<std::string> generate_spec(const probe::HostFacts& host, const SpecOptions& options);

}  // namespace hwimg::cdi
