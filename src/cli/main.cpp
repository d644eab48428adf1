#include <array>
#include <exception>
#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include "commands.hpp"
#include "usage_error.hpp"

namespace {

using namespace hwimg::cli;

struct Subcommand {
  std::string_view name;
  const char* description;
  void (*define)(CLI::App&, Action&);
};

// The subcommand the command line names: its first word that is not an option.
std::string_view named_subcommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '-') return argv[i];
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hwimg;
  CLI::App app{"hwimg: build hardware-specific OCI images and select the one that runs here", "hwimg"};
  app.set_version_flag("--version", std::string("hwimg ") + HWIMG_VERSION);
  app.require_subcommand(1);

  // clang-format off
  static const auto subcommands = std::to_array<Subcommand>({
      {"build", "Build every variant of a recipe into an OCI image layout", define_build_command},
      {"inspect", "Show an image index: variants with their tags, platforms, annotations, config, layers and "
                  "referrers", define_inspect_command},
      {"probe", "Print what this host can run: CPU level and features, NVIDIA driver, "
                "CUDA driver version and each GPU's compute capability", define_probe_command},
      {"matrix", "Show the variants a matrix file expands to, without building", define_matrix_command},
      {"push", "Push an image layout (the index, every variant, their tags) to a registry", define_push_command},
      {"tag", "Add tags to an image on its registry, without moving blobs", define_tag_command},
      {"login", "Check credentials with a registry and store them in Docker's config.json", define_login_command},
      {"select", "Print the one variant of an image that runs on this host "
                 "(ready for docker run), and why every other one does not", define_select_command},
      {"check", "Exit 0 if an image (a manifest, or a variant of an index) runs on this host, "
                "3 with the reasons if not: a guard for init containers and Slurm prologs", define_check_command},
      {"cdi", "Write a CDI spec that gives containers this host's GPUs as device nodes only "
              "(for variants that bundle their driver)", define_cdi_command},
      {"index", "Work with multi-variant image indexes on a registry", define_index_command},
      {"compat", "Show the Node Feature Discovery image-compatibility artifacts attached to an image",
       define_compat_command},
      {"serve", "Run a node-local registry mirror that answers a tag with the variant "
                "that runs on this node (for containerd, CRI-O, podman, enroot)", define_serve_command},
      {"ls", "List every tag of a repository on a registry", define_ls_command},
      {"digest", "Print the digest of an image, or of the variant selected for a host", define_digest_command},
      {"delete", "Delete a tag, or a manifest by digest, from its registry", define_delete_command},
      {"copy", "Copy an image between registries and layouts, with only the variants named or those that run "
               "on given hosts (mirrors for air-gapped sites)", define_copy_command},
      {"export", "Write one variant as an oci-archive or docker-archive tar "
                 "(docker load, podman load, skopeo, Apptainer)", define_export_command},
      {"cache", "List the cache of base and builder images and staged builds, or prune it", define_cache_command},
      {"completion", "Print a bash or zsh completion script for hwimg", define_completion_command},
  });
  // clang-format on
  cli::Action action;
  const auto named = named_subcommand(argc, argv);
  for (const auto& subcommand : subcommands) {
    auto* command = app.add_subcommand(std::string(subcommand.name), subcommand.description);
    if (named == subcommand.name || named == "completion") subcommand.define(*command, action);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const std::vector<std::string> words(argv + 1, argv + argc);
    fmt::print(stderr, "hwimg: error: {}\n", usage_message(app, e, words));
    return static_cast<int>(ExitCode::usage);
  }

  try {
    const auto result = action();
    if (!result) {
      fmt::print(stderr, "hwimg: error: {}\n", result.error().message);
      return static_cast<int>(result.error().exit_code);
    }
    return *result;
  } catch (const std::exception& e) {
    fmt::print(stderr, "hwimg: error: {}\n", e.what());
    return static_cast<int>(ExitCode::failure);
  }
}
