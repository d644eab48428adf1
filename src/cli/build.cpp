#include <memory>

#include "choice_option.hpp"
#include "commands.hpp"
#include "hwimg/commands/build.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_build_command(CLI::App& subcommand, Action& action) {
  auto arguments = std::make_shared<commands::BuildArguments>();
  auto& request = arguments->request;
  auto compression = std::make_shared<std::string>("gzip");
  auto verbose = std::make_shared<bool>(false);
  auto skip = std::make_shared<bool>(false);
  auto no_compat = std::make_shared<bool>(false);
  auto* cmd = &subcommand;
  cmd->add_option("recipe", request.recipe, "Recipe file (YAML)")->required();
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
  cmd->callback([&action, arguments, compression, verbose, skip, no_compat] {
    action = [arguments, compression, verbose, skip, no_compat]() -> Result<int> {
      auto& flags = arguments->request;
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
