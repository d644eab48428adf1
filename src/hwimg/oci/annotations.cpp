#include "hwimg/oci/annotations.hpp"

#include <algorithm>

namespace hwimg::oci::annotation {

bool has_hwimg_pairs(const Annotations& annotations) {
  return std::ranges::any_of(annotations, [](const auto& entry) { return entry.first.starts_with(hwimg_prefix); });
}

Annotations hwimg_pairs(const Annotations& annotations) {
  Annotations pairs;
  for (const auto& [key, value] : annotations) {
    if (key.starts_with(hwimg_prefix)) pairs.emplace(key, value);
  }
  return pairs;
}

const Annotations& variant_pairs_source(const Annotations& manifest, const Annotations& labels) {
  return has_hwimg_pairs(manifest) || !has_hwimg_pairs(labels) ? manifest : labels;
}

}  // namespace hwimg::oci::annotation
