#pragma once
// buildah, the engine of Dockerfile builds (docs/recipe.md#bring-your-dockerfile): daemonless, run
// as a child process with its own storage configuration (containers-storage.conf(5)), so its layer
// cache is shared by every variant and every build on this machine.

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hwimg/build/variant_builder.hpp"
#include "hwimg/recipe/dockerfile.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/process.hpp"

namespace hwimg::build {

struct BuildahOptions {
  std::filesystem::path program;   // from find_buildah
  std::filesystem::path authfile;  // hwimg's Docker config.json; empty: buildah's own credentials
  std::filesystem::path ca_file;   // --ca-file, handed to buildah as a certificate directory
  bool tls_verify = true;          // false with --insecure
  std::int64_t source_date_epoch = 0;
  Verbosity verbosity = Verbosity::quiet;
};

// $HWIMG_BUILDAH, else buildah on $PATH, as `environment` has them; the error says how to install it.
[[nodiscard]] Result<std::filesystem::path> find_buildah(const std::map<std::string, std::string>& environment);

struct BuildahBuild {
  std::string name;                   // what is built, for -v's line prefix: a variant id or a stage
  std::filesystem::path dockerfile;
  std::filesystem::path context;
  std::optional<std::string> target;  // --target
  std::vector<std::pair<std::string, std::string>> args;
  // Where buildah writes the built image's ID (--iidfile); none: the build only fills its cache.
  std::optional<std::filesystem::path> image_id_file;
};

class Buildah {
public:
  [[nodiscard]] static Result<Buildah> create(BuildahOptions options);

  // `buildah build --layers --timestamp ...`; a failure is the caller's to describe.
  [[nodiscard]] Result<util::ProcessResult> build(const BuildahBuild& build) const;
  // `buildah pull` of `reference` (NAME@DIGEST) into buildah's storage unless it is there already.
  [[nodiscard]] Result<void> pull(const std::string& reference) const;
  // Copies the image `image_id` from buildah's storage into the OCI layout `directory` as
  // `buildah_image_name`. A blob the directory already holds is not written again: containers/image
  // only looks whether the file is there, so an empty one named after a base layer's diff_id spares
  // exporting a layer hwimg takes from the base instead (dockerfile_variant.cpp).
  [[nodiscard]] Result<void> push(std::string_view image_id, const std::filesystem::path& directory) const;
  // The settings of image `image_id` that only Docker's config holds (Healthcheck, OnBuild, Shell:
  // docs/recipe.md#bring-your-dockerfile), as a JSON object of those set; `push` drops them.
  [[nodiscard]] Result<std::string> docker_config_extension(std::string_view image_id) const;

private:
  // --authfile, --cert-dir and --tls-verify, as hwimg's own registry options say.
  void add_registry_options(std::vector<std::string>& argv) const;
  // Runs `spec` (argv[1] the subcommand); a non-zero exit fails "failed to WHAT", with its last output.
  [[nodiscard]] Result<void> run_subcommand(const util::ProcessSpec& spec, const std::string& what) const;

  Buildah(BuildahOptions options, std::shared_ptr<util::TempDir> certificates)
      : m_options(std::move(options)), m_certificates(std::move(certificates)) {}

  BuildahOptions m_options;
  std::shared_ptr<util::TempDir> m_certificates;  // ca.crt for --cert-dir
};

// The name of the image in the layout `BuildahBuild::layout` names.
inline constexpr std::string_view buildah_image_name = "image";

// The image ID buildah wrote to an --iidfile (64 hex digits, with or without "sha256:"), as the
// 64 hex digits that name the image to buildah and in a FROM; anything else is refused, since it
// goes on buildah's command line.
[[nodiscard]] Result<std::string> read_image_id(const std::filesystem::path& iidfile);

// The instruction buildah's output says it was running when it failed: its last "STEP i/n:" line,
// in stage k of "[k/m]", matched against the Dockerfile; nullptr when it cannot be told.
[[nodiscard]] const recipe::Instruction* failed_instruction(std::string_view output, const recipe::Dockerfile& dockerfile);

}  // namespace hwimg::build
