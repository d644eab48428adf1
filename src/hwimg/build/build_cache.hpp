#pragma once
// Remembers, per layout, which manifest a variant produced from which inputs, so a rebuild with
// nothing changed reuses it without running the build step or packing layers again.

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hwimg/build/base_image.hpp"
#include "hwimg/build/variant_builder.hpp"

namespace hwimg::build {

// The scratch directories of builds (under TMPDIR, holding ${out}) start with this.
inline constexpr std::string_view scratch_prefix = "hwimg-build-";

// A digest of everything that determines the variant's image: hwimg's version, the recipe file, the
// variant plan, the settings, the base and builder images, and the metadata (path, size, mtime, mode) of every
// file under the build workdir and under layer sources that do not come from the build.
// What the build step writes (under the plan's ${out}) is hashed through its inputs, never itself.
[[nodiscard]] Result<std::string> variant_cache_key(const recipe::Recipe& recipe, const VariantPlan& plan,
                                                    const BaseImage& base, const BuildSettings& settings,
                                                    const std::filesystem::path& output,
                                                    const BaseImage* builder = nullptr);

// The same for a variant of a Dockerfile recipe: the Dockerfile, its target and build arguments,
// every image its stages start from (`images`: "REFERENCE DIGEST" each) and the metadata of every
// file in the build context.
[[nodiscard]] Result<std::string> dockerfile_cache_key(const VariantPlan& plan, const std::vector<std::string>& images,
                                                       const BuildSettings& settings,
                                                       const std::filesystem::path& output);

// The cached result for `key` in `layout`, when it and all its blobs are still there (`remote` ones
// excepted: base layers left in their registry).
[[nodiscard]] std::optional<BuiltVariant> cached_variant(const oci::Layout& layout, const std::string& key,
                                                         const std::set<oci::Digest>& remote = {});

// What `existing` (the layout as it was before this build; null: none) holds for `key`; the
// base's layers count as there when `settings` leave them in their registry.
[[nodiscard]] std::optional<BuiltVariant> reusable_variant(const oci::Layout* existing, const std::string& key,
                                                           const BaseImage& base, const BuildSettings& settings);

// Forgets every remembered variant whose manifest is not in `kept` (their blobs are going).
void forget_variants_except(const oci::Layout& layout, const std::set<oci::Digest>& kept);

[[nodiscard]] Result<void> remember_variant(const oci::Layout& layout, const std::string& key,
                                            const BuiltVariant& variant);

}  // namespace hwimg::build
