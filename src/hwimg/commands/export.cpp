#include "hwimg/commands/export.hpp"

#include <fmt/format.h>

#include "hwimg/commands/environment.hpp"
#include "hwimg/commands/select.hpp"
#include "hwimg/commands/usage.hpp"
#include "hwimg/registry/reference.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::commands {
namespace {

// What the archive names the image: --tag, else the source's repository (a layout: its directory's
// name) with its tag, "latest" when it named none; no name for a registry image named by digest.
struct ExportName {
  std::vector<std::string> repo_tags;
  std::string tag;
};

Result<ExportName> export_name(const ExportArguments& arguments, const image::ImageReference& reference) {
  const auto tag = reference.tag.empty() ? std::string("latest") : reference.tag;
  std::string text;
  if (arguments.repo_tag) {
    text = *arguments.repo_tag;
  } else if (reference.kind == image::SourceKind::registry) {
    if (reference.tag.empty() && reference.digest) return ExportName{{}, {}};
    text = reference.registry.name() + ":" + tag;
  } else {
    auto directory = std::filesystem::absolute(reference.directory).lexically_normal();
    if (!directory.has_filename()) directory = directory.parent_path();
    text = directory.filename().string() + ":" + tag;
  }
  const auto parsed = registry::parse_reference(text);
  if (!parsed || parsed->tag.empty() || parsed->digest) {
    return fail_usage("failed to export {}: \"{}\" is not an image name NAME:TAG{}", arguments.reference, text,
                      arguments.repo_tag ? "" : "; name the image with --tag NAME:TAG");
  }
  return ExportName{{text}, parsed->tag};
}

std::string variant_name(const select::Candidate& candidate) {
  return select::requirements_of(candidate).name;
}

// The candidate --variant names, or the only image; an index of several needs a choice.
Result<std::size_t> pick_candidate(const ExportArguments& arguments, const select::ImageSource& source) {
  std::vector<std::string> names;
  for (const auto& candidate : source.candidates) names.push_back(variant_name(candidate));
  if (arguments.variant) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == *arguments.variant) return i;
    }
    return fail_usage("failed to export {}: no variant \"{}\"{}; its variants: {}", arguments.reference,
                      *arguments.variant, util::did_you_mean(*arguments.variant, names), util::join(names, ", "));
  }
  if (names.size() == 1) return std::size_t{0};
  return fail_usage("failed to export {}: it is an index of {} variants; choose one with --variant ID or --for "
                    "FACTS.json (variants: {})",
                    arguments.reference, names.size(), util::join(names, ", "));
}

}  // namespace

Result<int> run_export(const ExportArguments& arguments) {
  HWIMG_TRY_ASSIGN(const auto reference, as_usage_error(image::parse_command_line_reference(arguments.reference)));
  HWIMG_TRY_ASSIGN(const auto name, export_name(arguments, reference));
  HWIMG_TRY_ASSIGN(const auto mtime, source_date_epoch());
  TerminalOutput output(Progress::hidden, arguments.registry.verbose);
  select::ImageSource source;
  std::size_t position = 0;
  if (arguments.facts_file) {
    // The selector's own path, exactly as `hwimg select REF --host FACTS` takes it.
    const JudgeArguments judge{arguments.reference, arguments.facts_file, std::nullopt, Explain::no,
                               arguments.registry};
    HWIMG_TRY_ASSIGN(auto judged, judge_image(judge, output));
    if (!judged.selection.chosen) {
      return finish_judging(judge, judged,
                            fmt::format("no variant of {} runs on the host {} describes", arguments.reference,
                                        arguments.facts_file->string()));
    }
    position = *judged.selection.chosen;
    source = std::move(judged.source);
  } else {
    HWIMG_TRY_ASSIGN(source, select::load_image_source(arguments.reference,
                                                       {client_options(arguments.registry, output), {}}));
    HWIMG_TRY_ASSIGN(position, pick_candidate(arguments, source));
  }
  const auto& chosen = source.candidates[position];
  const image::ArchiveOptions options{arguments.format, name.tag, name.repo_tags, mtime};
  HWIMG_TRY_ASSIGN(const auto summary, image::write_image_archive(*source.image.reader, chosen.descriptor, options,
                                                                  arguments.output));
  fmt::print("exported {} variant {} ({}) to {} as {}: {} layers, {:.1f} MiB{}\n", arguments.reference,
             variant_name(chosen), chosen.descriptor.digest.str(), arguments.output.string(),
             arguments.format == image::ArchiveFormat::docker ? "docker-archive" : "oci-archive", summary.layers,
             static_cast<double>(summary.bytes) / (1 << 20),
             name.repo_tags.empty() ? std::string() : ", named " + name.repo_tags.front());
  return 0;
}

}  // namespace hwimg::commands
