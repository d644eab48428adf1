#include <memory>

#include "choice_option.hpp"
#include "commands.hpp"
#include "hwimg/commands/export.hpp"
#include "registry_options.hpp"

namespace hwimg::cli {

void define_export_command(CLI::App& subcommand, Action& action) {
  struct Arguments {
    commands::ExportArguments exported;
    std::string format;
    std::string output;
    std::string variant;
    std::string facts_file;
    std::string repo_tag;
  };
  auto args = std::make_shared<Arguments>();
  auto* command = &subcommand;
  command->add_option("REFERENCE", args->exported.reference, "REGISTRY/REPO[:TAG|@DIGEST] or oci:DIR[:TAG]")
      ->required();
  add_choice_option(*command, "--format", args->format, {"oci-archive", "docker-archive"},
                    "oci-archive (an OCI image layout in a tar, skopeo's oci-archive:) or docker-archive (what "
                    "docker save writes: manifest.json and the same layout, for docker load, podman load and "
                    "apptainer build x.sif docker-archive:FILE)",
                    DefaultShown::no)
      ->required();
  command->add_option("-o,--output", args->output, "the tar to write (replaced only once complete)")->required();
  auto* variant = command->add_option("--variant", args->variant, "the variant to export, by its id");
  auto* facts = command->add_option("--for", args->facts_file,
                                    "export the variant hwimg select picks for the host this facts file "
                                    "describes (hwimg probe --format json)")
                    ->check(CLI::ExistingFile)
                    ->excludes(variant);
  auto* tag = command->add_option("--tag", args->repo_tag,
                                  "NAME:TAG the archive gives the image (default: the source's name and tag; a "
                                  "layout's directory name)");
  add_registry_options(*command, args->exported.registry);
  command->footer("An index needs --variant or --for; a single-manifest image is exported as it is. Layers keep "
                  "their compression and digests; blobs are verified as they are read. Exit status: 0 exported, "
                  "1 failure, 2 usage mistake (an index without --variant/--for, an unknown variant id), 3 --for "
                  "found no variant that runs on that host. Environment: SOURCE_DATE_EPOCH dates every entry of the "
                  "tar (default 0, 1970-01-01), so the same image and time give byte-identical archives.");
  command->callback([args, variant, facts, tag, &action] {
    auto& exported = args->exported;
    exported.format = args->format == "docker-archive" ? image::ArchiveFormat::docker : image::ArchiveFormat::oci;
    exported.output = args->output;
    if (variant->count() > 0) exported.variant = args->variant;
    if (facts->count() > 0) exported.facts_file = args->facts_file;
    if (tag->count() > 0) exported.repo_tag = args->repo_tag;
    action = [args] { return commands::run_export(args->exported); };
  });
}

}  // namespace hwimg::cli
