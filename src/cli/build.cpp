#include <memory>

#include "choice_option.hpp"
#include "commands.hpp"
#include "hwimg/commands/build.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {
namespace {

struct DockerfileFlags {
  std::string file;
  std::string context;
  std::string target;
  std::vector<std::string> args;
};

// A flag's value, named by the flag in messages (recipe::SourceLocation without a line).
recipe::LocatedString flag_value(std::string value, std::string flag) {
  return {std::move(value), {std::move(flag), 0, 0}};
}

// The recipe the --dockerfile flags make, or none with a recipe file; exactly one of them.
Result<std::optional<recipe::DockerfileSpec>> dockerfile_spec(const DockerfileFlags& flags,
                                                              const std::filesystem::path& recipe) {
  if (flags.file.empty()) {
    if (recipe.empty()) {
      return fail_usage("failed to build: name a recipe file, or a Dockerfile with --dockerfile FILE (see hwimg build "
                        "--help)");
    }
    if (!flags.context.empty() || !flags.target.empty() || !flags.args.empty()) {
      return fail_usage("failed to build {}: --context, --target and --build-arg go with --dockerfile; a recipe "
                        "names them as context:, target: and args:", recipe.string());
    }
    return std::optional<recipe::DockerfileSpec>();
  }
  if (!recipe.empty()) {
    return fail_usage("failed to build: name a recipe file ({}) or --dockerfile {}, not both", recipe.string(), flags.file);
  }
  recipe::DockerfileSpec spec;
  spec.file = flag_value(flags.file, "--dockerfile");
  if (!flags.context.empty()) spec.context = flag_value(flags.context, "--context");
  if (!flags.target.empty()) spec.target = flag_value(flags.target, "--target");
  for (const auto& arg : flags.args) {
    const auto equals = arg.find('=');
    if (equals == std::string::npos || equals == 0) {
      return fail_usage("invalid --build-arg \"{}\": expected NAME=VALUE", arg);
    }
    const auto name = arg.substr(0, equals);
    spec.args.emplace_back(name, flag_value(arg.substr(equals + 1), "--build-arg " + name));
  }
  return std::optional<recipe::DockerfileSpec>(std::move(spec));
}

}  // namespace

void define_build_command(CLI::App& subcommand, Action& action) {
  auto arguments = std::make_shared<commands::BuildArguments>();
  auto& request = arguments->request;
  auto compression = std::make_shared<std::string>("gzip");
  auto verbose = std::make_shared<bool>(false);
  auto skip = std::make_shared<bool>(false);
  auto no_compat = std::make_shared<bool>(false);
  auto* cmd = &subcommand;
  auto dockerfile = std::make_shared<DockerfileFlags>();
  cmd->add_option("recipe", request.recipe, "Recipe file (YAML); or build a Dockerfile with --dockerfile");
  cmd->add_option("--dockerfile", dockerfile->file,
                  "Build this Dockerfile with buildah, once per variant of --matrix (instead of a recipe)")
      ->option_text("FILE");
  cmd->add_option("--context", dockerfile->context, "With --dockerfile: the build context (default: its directory)")
      ->option_text("DIR");
  cmd->add_option("--target", dockerfile->target, "With --dockerfile: the stage to build (default: the last)")
      ->option_text("STAGE");
  cmd->add_option("--build-arg", dockerfile->args,
                  "With --dockerfile: a build argument; the value may use recipe variables, e.g. "
                  "'MARCH=${cpu.march}' (repeatable)")
      ->option_text("NAME=VALUE");
  cmd->add_option("--matrix", request.matrix, "Matrix file; overrides the recipe's `matrix:`");
  cmd->add_option("-o,--output", request.layout, "Output OCI image layout directory");
  cmd->add_option("--push", arguments->push,
                  "Push the index, every variant and their TAG-<variant> tags to REGISTRY/REPO:TAG; without -o, "
                  "no local layout is kept and registry base layers are mounted or relayed there, never stored here")
      ->option_text("REGISTRY/REPO:TAG");
  cmd->add_flag("--no-compat", *no_compat,
                "With --push, attach no NFD image-compatibility artifact to the variants (default: one per variant)");
  cmd->add_option("--tag", request.tag, "Tag of the multi-variant index; variants get TAG-<id>")->capture_default_str();
  cmd->add_option("-j,--jobs", request.jobs, "Variants built at once (default: one per core)");
  cmd->add_option("--only", request.only, "Build only this variant id (repeatable)");
  add_choice_option(*cmd, "--compression", *compression, {"gzip", "zstd"}, "Layer compression");
  cmd->add_option("--compression-level", request.compression.level, "gzip 1-12 (default 6), zstd 1-19 (default 3)");
  cmd->add_flag("--skip-unsupported", *skip, "Drop matrix combinations that cannot be built, with a warning");
  auto explain = std::make_shared<bool>(false);
  cmd->add_flag("--explain", *explain,
                "Build nothing: resolve every image and print, per variant, what the build would do and whether "
                "the layout (-o, or --push's staging) already has it");
  cmd->add_flag("-v,--verbose", *verbose, "Show the output of build steps and every registry exchange");
  cmd->add_option("--cache", arguments->cache,
                  "Blob cache of registry base and builder images (default: $XDG_CACHE_HOME/hwimg or "
                  "~/.cache/hwimg)")
      ->option_text("DIR");
  cmd->add_option("--cache-max-size", arguments->cache_max_size,
                  "Prune the cache to this size when the build is done, least recently used first, never what a "
                  "running build uses (default: HWIMG_CACHE_MAX_SIZE, else 40 GiB or a quarter of its file system; "
                  "\"off\": no cap)")
      ->option_text("SIZE");
  add_registry_options(*cmd, arguments->registry, VerboseFlag::omit);
  cmd->footer(
      "Environment: SOURCE_DATE_EPOCH sets every file mtime and the `created` times (default 0), so the same\n"
      "inputs give byte-identical layouts. Build steps see the recipe variables as HWIMG_* variables\n"
      "(${cpu.march} -> HWIMG_CPU_MARCH).");
  cmd->callback([&action, arguments, compression, verbose, skip, no_compat, dockerfile, explain] {
    action = [arguments, compression, verbose, skip, no_compat, dockerfile, explain]() -> Result<int> {
      auto& flags = arguments->request;
      flags.mode = *explain ? build::BuildMode::explain : build::BuildMode::build;
      HWIMG_TRY_ASSIGN(flags.dockerfile, dockerfile_spec(*dockerfile, flags.recipe));
      arguments->compat = *no_compat ? compat::CompatArtifacts::skip : compat::CompatArtifacts::attach;
      HWIMG_TRY_ASSIGN(flags.compression.compression, oci::parse_compression(*compression));
      flags.expand.skip = *skip ? matrix::SkipUnsupported::yes : matrix::SkipUnsupported::no;
      flags.verbosity = *verbose ? build::Verbosity::verbose : build::Verbosity::quiet;
      arguments->registry.verbose = *verbose ? commands::Verbose::yes : commands::Verbose::no;
      return commands::run_build(*arguments);
    };
  });
}

}  // namespace hwimg::cli
