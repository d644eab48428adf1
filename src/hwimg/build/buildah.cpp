#include "hwimg/build/buildah.hpp"

#include <charconv>

#include <unistd.h>

#include "hwimg/build/build_cache.hpp"
#include "hwimg/oci/digest.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/json_reader.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::build {
namespace json = util::json;
namespace fs = std::filesystem;

namespace {

bool is_executable(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

// "[2/3] STEP 3/4: RUN make" -> stage 2, step 3, "RUN make"; stage 1 when buildah prints no "[k/m]".
struct StepLine {
  std::size_t stage = 1;
  std::size_t step = 0;
  std::string text;
};

std::optional<std::size_t> number_before(std::string_view text, char end) {
  const auto stop = text.find(end);
  std::size_t value = 0;
  if (stop == std::string_view::npos || stop == 0) return std::nullopt;
  const auto [rest, error] = std::from_chars(text.data(), text.data() + stop, value);
  if (error != std::errc() || rest != text.data() + stop) return std::nullopt;
  return value;
}

std::optional<StepLine> parse_step_line(std::string_view line) {
  StepLine step;
  if (line.starts_with('[')) {
    const auto stage = number_before(line.substr(1), '/');
    const auto close = line.find("] ");
    if (!stage || close == std::string_view::npos) return std::nullopt;
    step.stage = *stage;
    line.remove_prefix(close + 2);
  }
  if (!line.starts_with("STEP ")) return std::nullopt;
  line.remove_prefix(5);
  const auto number = number_before(line, '/');
  const auto colon = line.find(": ");
  if (!number || colon == std::string_view::npos) return std::nullopt;
  step.step = *number;
  step.text = line.substr(colon + 2);
  return step;
}

}  // namespace

Result<fs::path> find_buildah(const std::map<std::string, std::string>& environment) {
  if (const auto named = environment.find("HWIMG_BUILDAH"); named != environment.end() && !named->second.empty()) {
    if (!is_executable(named->second)) {
      return fail("failed to run buildah: HWIMG_BUILDAH names {}, which is not an executable file", named->second);
    }
    return fs::path(named->second);
  }
  if (const auto path = environment.find("PATH"); path != environment.end()) {
    for (const auto& directory : util::split(path->second, ':')) {
      if (directory.empty()) continue;
      if (const auto candidate = fs::path(directory) / "buildah"; is_executable(candidate)) return candidate;
    }
  }
  return fail("failed to run buildah: it is not installed (not on PATH, and HWIMG_BUILDAH is not set); a Dockerfile "
              "is built with buildah: apt-get install buildah (Debian 12 and later)");
}

Result<Buildah> Buildah::create(BuildahOptions options) {
  std::shared_ptr<util::TempDir> certificates;
  if (!options.ca_file.empty()) {
    // buildah trusts the *.crt files of a directory, not one file.
    HWIMG_TRY_ASSIGN(auto directory, util::TempDir::create(fs::temp_directory_path(),
                                                           fmt::format("{}{}-certs-", scratch_prefix, ::getpid())));
    certificates = std::make_shared<util::TempDir>(std::move(directory));
    std::error_code ec;
    fs::copy_file(options.ca_file, certificates->path() / "ca.crt", ec);
    if (ec) return fail("failed to hand --ca-file {} to buildah: {}", options.ca_file.string(), ec.message());
  }
  return Buildah(std::move(options), std::move(certificates));
}

void Buildah::add_registry_options(std::vector<std::string>& argv) const {
  if (!m_options.authfile.empty()) argv.insert(argv.end(), {"--authfile", m_options.authfile.string()});
  if (m_certificates) argv.insert(argv.end(), {"--cert-dir", m_certificates->path().string()});
  if (!m_options.tls_verify) argv.emplace_back("--tls-verify=false");
}

Result<util::ProcessResult> Buildah::build(const BuildahBuild& build) const {
  util::ProcessSpec spec;
  spec.argv = {m_options.program.string(), "build",
               // As root in a container or VM no user namespace is needed; chroot works where runc's does not.
               "--isolation", "chroot", "--layers", "--timestamp", std::to_string(m_options.source_date_epoch),
               // Without it buildah 1.28 keeps, still mounted, the working container of a failed build
               // and of every stage with no instruction after its FROM, which each pinned shared stage
               // is (pinned_dockerfile): one leaked mount per variant built (docs/recipe.md).
               "--force-rm",
               // In buildah's default OCI format SHELL is ignored, so RUN steps would run under /bin/sh
               // where the Dockerfile asked for bash -o pipefail, unlike docker build (docs/recipe.md).
               "--format", "docker",
               "--file", build.dockerfile.string()};
  add_registry_options(spec.argv);
  if (build.target) spec.argv.insert(spec.argv.end(), {"--target", *build.target});
  for (const auto& [name, value] : build.args) spec.argv.insert(spec.argv.end(), {"--build-arg", name + "=" + value});
  if (build.image_id_file) spec.argv.insert(spec.argv.end(), {"--iidfile", build.image_id_file->string()});
  spec.argv.push_back(build.context.string());
  spec.echo_output = m_options.verbosity == Verbosity::verbose;
  spec.echo_prefix = build.name + " | ";
  return with_context(util::run_process(spec), "failed to run " + m_options.program.string());
}

Result<void> Buildah::pull(const std::string& reference) const {
  util::ProcessSpec spec;
  spec.argv = {m_options.program.string(), "pull", "--policy", "missing"};
  add_registry_options(spec.argv);
  spec.argv.push_back(reference);
  spec.echo_output = m_options.verbosity == Verbosity::verbose;
  spec.echo_prefix = "pull " + reference + " | ";
  return run_subcommand(spec, fmt::format("pull {} into buildah's storage", reference));
}

Result<void> Buildah::push(std::string_view image_id, const fs::path& directory) const {
  util::ProcessSpec spec;
  spec.argv = {m_options.program.string(), "push", "--disable-compression", "--quiet", std::string(image_id),
               fmt::format("oci:{}:{}", directory.string(), buildah_image_name)};
  return run_subcommand(spec, fmt::format("copy image {} out of buildah's storage", image_id));
}

Result<std::string> Buildah::docker_config_extension(std::string_view image_id) const {
  util::ProcessSpec spec;
  spec.argv = {m_options.program.string(), "inspect", "--type", "image", std::string(image_id)};
  // stdout is the JSON alone; buildah's warnings go to stderr and explain a failure.
  spec.standard_error = util::StandardError::separate;
  const auto context = fmt::format("failed to read the config of image {} in buildah's storage", image_id);
  HWIMG_TRY_ASSIGN(const auto result, with_context(util::run_process(spec), "failed to run " + m_options.program.string()));
  if (result.exit_status != 0) {
    return fail("{} (buildah inspect exited with status {}): {}", context, result.exit_status,
                util::tail_lines(result.error_output.empty() ? result.output : result.error_output, 5));
  }
  const auto inspected = json::parse_object(result.output);
  if (!inspected) {
    return fail("{}: buildah inspect printed no JSON object{}", context,
                result.error_output.empty() ? "" : "; it said: " + util::tail_lines(result.error_output, 3));
  }
  // Where a member has the wrong type, the error names it by its path.
  const auto at = [&](std::string_view path) { return fmt::format("{}: {}", context, path); };
  HWIMG_TRY_ASSIGN(const auto* docker, with_context(json::member(*inspected, "Docker", json::Kind::object), at("Docker")));
  json::Json extension = json::Json::object();
  if (docker == nullptr) return extension.dump();
  HWIMG_TRY_ASSIGN(const auto* config,
                   with_context(json::member(*docker, "config", json::Kind::object), at("Docker.config")));
  if (config == nullptr) return extension.dump();
  HWIMG_TRY_ASSIGN(const auto* healthcheck, with_context(json::member(*config, "Healthcheck", json::Kind::object),
                                                         at("Docker.config.Healthcheck")));
  if (healthcheck != nullptr) extension["Healthcheck"] = *healthcheck;
  for (const auto* key : {"OnBuild", "Shell"}) {
    HWIMG_TRY_ASSIGN(const auto values,
                     with_context(json::strings_member(*config, key), at(fmt::format("Docker.config.{}", key))));
    if (values && !values->empty()) extension[key] = *values;
  }
  return extension.dump();
}

Result<void> Buildah::run_subcommand(const util::ProcessSpec& spec, const std::string& what) const {
  HWIMG_TRY_ASSIGN(const auto result, with_context(util::run_process(spec), "failed to run " + m_options.program.string()));
  if (result.exit_status != 0) {
    return fail("failed to {} (buildah {} exited with status {}): {}", what, spec.argv.at(1), result.exit_status,
                util::tail_lines(result.output, 5));
  }
  return {};
}

Result<std::string> read_image_id(const fs::path& iidfile) {
  HWIMG_TRY_ASSIGN(const auto written, util::read_file(iidfile));
  const auto text = std::string(util::trim(written));
  const auto id = oci::Digest::parse(text.starts_with("sha256:") ? text : "sha256:" + text);
  if (!id) return fail("buildah's --iidfile {} holds \"{}\", not an image ID", iidfile.string(), util::printable(text));
  return id->hex();
}

const recipe::Instruction* failed_instruction(std::string_view output, const recipe::Dockerfile& dockerfile) {
  std::optional<StepLine> last;
  for (const auto& line : util::split(output, '\n')) {
    if (auto step = parse_step_line(line)) last = std::move(step);
  }
  if (!last || last->stage == 0 || last->stage > dockerfile.stages.size() || last->step == 0) return nullptr;
  const auto& instructions = dockerfile.stages[last->stage - 1].instructions;
  if (last->step > instructions.size()) return nullptr;
  const auto& instruction = instructions[last->step - 1];
  // buildah numbers what it runs; a stage it skipped would shift the count, so the keyword must agree.
  if (!util::to_lower(last->text).starts_with(util::to_lower(instruction.keyword))) return nullptr;
  return &instruction;
}

}  // namespace hwimg::build
