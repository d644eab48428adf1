#include "hwimg/build/builder_image.hpp"

#include <unistd.h>

#include "hwimg/build/build_cache.hpp"
#include "hwimg/image/rootfs.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::build {
namespace fs = std::filesystem;

oci::Platform host_platform(hw::CpuArch arch, std::optional<hw::X86Level> level) {
  if (arch == hw::CpuArch::arm64) return {"linux", "arm64", "v8"};
  return {"linux", "amd64", level ? hw::oci_variant(*level) : std::string()};
}

std::map<std::string, std::string> builder_environment(const std::vector<std::string>& image_env,
                                                       const std::map<std::string, std::string>& step,
                                                       std::int64_t source_date_epoch) {
  std::map<std::string, std::string> environment{
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, {"HOME", "/tmp"}};
  for (const auto& entry : image_env) {
    const auto equals = entry.find('=');
    if (equals == std::string::npos) continue;
    environment[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  for (const auto& [name, value] : step) environment[name] = value;
  environment["SOURCE_DATE_EPOCH"] = std::to_string(source_date_epoch);
  return environment;
}

Result<std::shared_ptr<const BaseImage>> BuilderImages::resolve(const VariantPlan& plan) {
  if (!plan.build || !plan.build->image) return std::shared_ptr<const BaseImage>();
  const auto& step = *plan.build;
  const auto& platform = m_platform;
  HWIMG_TRY_ASSIGN(auto image,
                   with_context(m_images.resolve(*step.image, step.image_text, platform, ImageRole::builder),
                                step.image_location.str()));
  // An image that is one manifest, not an index, names its platform only in its config.
  const auto& config = image->config;
  if ((!config.os.empty() && config.os != platform.os) ||
      (!config.architecture.empty() && config.architecture != platform.architecture)) {
    return fail("{}: failed to use builder image {}: it is for {}/{}; this machine is {}/{}", step.image_location.str(),
                step.image_text, config.os, config.architecture, platform.os, platform.architecture);
  }
  return image;
}

Result<ContainerRunner> BuilderImages::runner() {
  return m_runner.get(std::monostate{}, [] { return find_container_runner(); });
}

Result<fs::path> BuilderImages::rootfs(const BaseImage& image, util::Output& output) {
  return m_rootfs.get(image.manifest_descriptor.digest, [&]() -> Result<fs::path> {
    const auto context = "failed to use builder image " + image.reference;
    HWIMG_TRY_ASSIGN(auto* cache, with_context(m_images.cache(), context));
    const auto layers = [&]() -> Result<std::vector<image::LayerFile>> {
      output.progress(fmt::format("unpacking builder image {} ({} layers)...", image.reference, image.layers.size()));
      HWIMG_TRY_ASSIGN(const auto files, m_images.layer_files(image));
      std::vector<image::LayerFile> layer_files;
      for (std::size_t i = 0; i < files.size(); ++i) layer_files.push_back({files[i], image.layers[i].digest.str()});
      return layer_files;
    };
    // Only root can give files their owners in the layers; a rootless build owns them itself.
    const auto ownership = ::geteuid() == 0 ? image::Ownership::from_layers : image::Ownership::unpacking_user;
    std::vector<oci::Digest> layer_digests;
    for (const auto& layer : image.layers) layer_digests.push_back(layer.digest);
    HWIMG_TRY_ASSIGN(auto root, with_context(image::unpacked_rootfs(*cache, image.manifest_descriptor.digest,
                                                                    layer_digests, layers, ownership),
                                             context));
    if (!image::exists_in_rootfs(root, "/bin/sh")) return fail("{}: it has no /bin/sh to run the build step", context);
    return root;
  });
}

Result<util::ProcessResult> BuilderImages::run_step(const VariantPlan& plan, const BaseImage& image,
                                                    const BuildSettings& settings) {
  const auto& step = *plan.build;
  const auto context = "failed to run the build step in builder image " + image.reference;
  HWIMG_TRY_ASSIGN(const auto runner, with_context(this->runner(), context));
  HWIMG_TRY_ASSIGN(const auto root, rootfs(image, *settings.output));
  HWIMG_TRY_ASSIGN(auto mounts, with_context(plan_container_mounts(root, {step.workdir, plan.out}), context));
  HWIMG_TRY_ASSIGN(const auto scratch,
                   util::TempDir::create(fs::temp_directory_path(), fmt::format("{}{}-", scratch_prefix, ::getpid())));
  ContainerStep container;
  container.mounts = std::move(mounts);
  container.argv = {"/bin/sh", "-ec", step.run};
  container.working_directory = step.workdir;
  // The image's Env, then what build.pass_env takes from hwimg's, then HWIMG_* and build.env.
  auto step_environment = passed_environment(step.pass_env, settings);
  for (const auto& [name, value] : step.environment) step_environment[name] = value;
  container.environment = builder_environment(image.config.env, step_environment, settings.source_date_epoch);
  container.scratch = scratch.path();
  container.echo = settings.verbosity == Verbosity::verbose ? EchoOutput::yes : EchoOutput::no;
  return with_context(run_container_step(runner, container), context);
}

}  // namespace hwimg::build
