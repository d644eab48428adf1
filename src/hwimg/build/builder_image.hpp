#pragma once
// Builder images (docs/recipe.md#build-image): the image a recipe's build step runs in, resolved
// for this machine's platform once per build and fetched into the user's blob cache as bases are,
// its root filesystem unpacked once per manifest digest and shared read-only by every variant.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <variant>

#include "hwimg/build/base_image.hpp"
#include "hwimg/build/container_step.hpp"
#include "hwimg/build/variant_builder.hpp"
#include "hwimg/hw/cpu_levels.hpp"
#include "hwimg/util/single_flight.hpp"

namespace hwimg::build {

class BuilderImages {
public:
  // Images are resolved for `platform`, this machine's, and their layers fetched through `images`,
  // the build's BaseResolver.
  BuilderImages(BaseResolver& images, oci::Platform platform) : m_images(images), m_platform(std::move(platform)) {}

  // The plan's builder image for this machine (manifest and config, no layer read); nullptr when
  // the plan's build step runs on the host. Errors start with the recipe's file:line:column.
  [[nodiscard]] Result<std::shared_ptr<const BaseImage>> resolve(const VariantPlan& plan);

  // Runs the plan's build step in `image`: /bin/sh -ec RUN in the workdir, with the image's Env,
  // the HWIMG_* variables and SOURCE_DATE_EPOCH. The first call per image unpacks its rootfs.
  [[nodiscard]] Result<util::ProcessResult> run_step(const VariantPlan& plan, const BaseImage& image,
                                                     const BuildSettings& settings);

private:
  Result<std::filesystem::path> rootfs(const BaseImage& image, util::Output& output);
  Result<ContainerRunner> runner();

  BaseResolver& m_images;
  oci::Platform m_platform;
  // Every variant of a build fails alike on an image that would not unpack, or without runc and bwrap.
  util::SingleFlight<oci::Digest, std::filesystem::path> m_rootfs{util::Keep::everything};
  util::SingleFlight<std::monostate, ContainerRunner> m_runner{util::Keep::everything};
};

// A machine's platform as image indexes name it, from the CPU the probe found (its x86-64 level
// counts what the OS enables too): linux/amd64 with the level, or linux/arm64/v8.
[[nodiscard]] oci::Platform host_platform(hw::CpuArch arch, std::optional<hw::X86Level> level);

// The environment of a step in a builder image: the image's Env, then the step's variables and
// SOURCE_DATE_EPOCH; PATH as in Docker and HOME=/tmp (the image's files are read-only) unless set.
[[nodiscard]] std::map<std::string, std::string> builder_environment(const std::vector<std::string>& image_env,
                                                                     const std::map<std::string, std::string>& step,
                                                                     std::int64_t source_date_epoch);

}  // namespace hwimg::build
