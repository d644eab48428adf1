#pragma once
// A variant's requirements (its org.hwimg.* annotations and platform) as a Node Feature Discovery
// image-compatibility spec: the YAML `nfd compat validate-node` reads (docs/nfd.md#the-spec).
//
//   auto yaml = compat::nfd_spec_yaml(index.manifests[0]);   // "version: v1alpha1\ncompatibilities: ..."

#include <string>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::compat {

// The NFD spec version and the artifact's types (docs/nfd.md#the-artifact).
inline constexpr std::string_view nfd_spec_version = "v1alpha1";
inline constexpr std::string_view nfd_artifact_type = "application/vnd.nfd.image-compatibility.v1alpha1";
inline constexpr std::string_view nfd_spec_media_type = "application/vnd.nfd.image-compatibility.spec.v1alpha1+yaml";

// One compatibility set whose rules are: CPU (NFD's cpu.cpuid flags: the X86_64_V<n> level and
// every feature the variant needs; cpu.model vendor_id for a vendor's target), NVIDIA GPU (a PCI
// device of vendor 10de), CUDA driver, GPU code and bundled driver (hwimg.org labels as
// `hwimg probe --format nfd` writes them, NFD's local.label). Same variant, same bytes.
[[nodiscard]] Result<std::string> nfd_spec_yaml(const oci::Descriptor& variant);

}  // namespace hwimg::compat
