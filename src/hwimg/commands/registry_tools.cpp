#include "hwimg/commands/registry_tools.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwimg/commands/select.hpp"
#include "hwimg/commands/usage.hpp"
#include "hwimg/image/open_image.hpp"
#include "hwimg/oci/layout.hpp"
#include "hwimg/registry/client.hpp"
#include "hwimg/registry/referrers.hpp"
#include "hwimg/registry/tag_deletion.hpp"

namespace hwimg::commands {
namespace {

using ordered_json = nlohmann::ordered_json;

// A reference the user typed that must name a repository on a registry.
Result<registry::Reference> tool_reference(const std::string& text, std::string_view verb) {
  if (oci::is_layout_reference(text)) {
    return fail_usage("failed to {} {}: this works on a registry, REGISTRY/REPO[:TAG]", verb, text);
  }
  auto reference = registry::parse_reference(text);
  if (!reference) return fail_usage("failed to {} {}: {}", verb, text, reference.error().message);
  return reference;
}

std::string json_text(const ordered_json& value) {
  return value.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

void print_digest(const DigestArguments& arguments, const oci::Descriptor& descriptor,
                  const std::optional<std::string>& variant) {
  if (arguments.format == DataFormat::text) {
    fmt::print("{}\n", descriptor.digest.str());
    return;
  }
  ordered_json out{{"reference", arguments.reference},
                   {"digest", descriptor.digest.str()},
                   {"mediaType", descriptor.media_type},
                   {"size", descriptor.size}};
  if (variant) out["variant"] = *variant;
  fmt::print("{}", json_text(out));
}

}  // namespace

Result<int> run_list_tags(const ListTagsArguments& arguments) {
  HWIMG_TRY_ASSIGN(const auto repository, tool_reference(arguments.repository, "list tags of"));
  if (!repository.tag.empty() || repository.digest) {
    return fail_usage("failed to list tags of {}: name the repository alone, REGISTRY/REPO", arguments.repository);
  }
  TerminalOutput output(Progress::hidden, arguments.registry.verbose);
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(client_options(arguments.registry, output)));
  HWIMG_TRY_ASSIGN(auto tags, client.list_tags(repository, arguments.page_size));
  if (arguments.digest_tags == DigestTags::exclude) std::erase_if(tags, registry::is_referrers_tag);
  if (arguments.format == DataFormat::json) {
    fmt::print("{}", json_text(ordered_json{{"repository", repository.name()}, {"tags", tags}}));
  } else {
    for (const auto& tag : tags) fmt::print("{}\n", tag);
  }
  return 0;
}

Result<int> run_digest(const DigestArguments& arguments) {
  HWIMG_TRY(as_usage_error(image::parse_command_line_reference(arguments.reference)));
  TerminalOutput output(Progress::hidden, arguments.registry.verbose);
  if (!arguments.facts_file) {
    HWIMG_TRY_ASSIGN(const auto image,
                     image::open_image(arguments.reference, {client_options(arguments.registry, output), {}}));
    print_digest(arguments, image.root, std::nullopt);
    return 0;
  }
  // The selector's own path, exactly as `hwimg select REF --host FACTS` takes it.
  const JudgeArguments judge{arguments.reference, arguments.facts_file, std::nullopt, Explain::no, arguments.registry};
  HWIMG_TRY_ASSIGN(const auto judged, judge_image(judge, output));
  if (const auto* verdict = judged.selection.chosen_verdict()) {
    print_digest(arguments, judged.source.candidates[*judged.selection.chosen].descriptor, verdict->requirements.name);
  }
  return finish_judging(judge, judged,
                        fmt::format("no variant of {} runs on the host {} describes", arguments.reference,
                                    arguments.facts_file->string()));
}

Result<int> run_delete(const std::string& reference, DataFormat format, const RegistryFlags& flags) {
  HWIMG_TRY_ASSIGN(const auto parsed, tool_reference(reference, "delete"));
  TerminalOutput output(Progress::hidden, flags.verbose);
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(client_options(flags, output)));
  // A tag goes alone; a digest takes every tag naming it (docs/compatibility.md#deleting-manifests).
  const bool tag_only = !parsed.digest;
  HWIMG_TRY_ASSIGN(const auto digest,
                   tag_only ? registry::delete_tag(client, parsed) : client.delete_manifest(parsed));
  if (format == DataFormat::json) {
    fmt::print("{}", json_text(ordered_json{
                         {"reference", parsed.str()}, {"digest", digest.str()}, {"deleted", tag_only ? "tag" : "manifest"}}));
  } else if (tag_only) {
    fmt::print("deleted tag {} (it named {}; that manifest and its other tags stay)\n", parsed.str(), digest.str());
  } else {
    fmt::print("deleted {} and every tag that named it\n", parsed.str());
  }
  return 0;
}

}  // namespace hwimg::commands
