#pragma once
// The builder's check that a variant's programs are for its architecture (docs/recipe.md#cpu-code):
// every ELF executable and shared object in the variant's own layers and in the layers its recipe
// shares between variants must be 64-bit and for the variant's machine (EM_X86_64 for amd64,
// EM_AARCH64 for arm64). A host compiler that ignored the variant leaves an x86-64 program in an
// arm64 variant, which `select` would pick on a Grace node and which would fail there with "exec
// format error". Relocatable objects and device code (EM_CUDA) are not run by the CPU; the
// device-code check reads those.

#include <filesystem>
#include <functional>
#include <string>

#include "hwimg/build/variant_plan.hpp"
#include "hwimg/hw/elf_machine.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::build {

// The identity of the regular file `path`; nothing when it is not ELF or cannot be read (the
// layer writer reports unreadable files).
[[nodiscard]] std::optional<hw::ElfIdentity> elf_identity_of(const std::filesystem::path& path);

// Calls `visit(file, path_in_image)` for each regular file of the layer's source (a file or a
// directory; links are not followed).
void for_each_layer_file(const LayerPlan& layer,
                         const std::function<void(const std::filesystem::path&, const std::string&)>& visit);

// Fails naming each file (its path in the image, its machine and class, and the layer) that is not
// for the variant's architecture, the first few listed and the rest counted.
[[nodiscard]] Result<void> check_architecture(const VariantPlan& plan);

}  // namespace hwimg::build
