#include "hwimg/commands/registry_commands.hpp"

#include <istream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwimg/build/index_create.hpp"
#include "hwimg/compat/artifact.hpp"
#include "hwimg/image/open_image.hpp"
#include "hwimg/image/registry_reader.hpp"
#include "hwimg/oci/layout.hpp"
#include "hwimg/registry/client.hpp"

namespace hwimg::commands {
namespace {

Result<registry::Reference> usage_reference(const std::string& text) {
  auto reference = registry::parse_reference(text);
  if (!reference) return std::unexpected(Error{reference.error().message, ExitCode::usage});
  return reference;
}

Result<void> check_same_repository(const registry::Reference& destination, const registry::Reference& source) {
  if (source.registry != destination.registry || source.repository != destination.repository) {
    return fail_usage("--from {} is in {}, not in {}: a registry accepts an index only when its variants are in "
                      "the same repository; push the variant there first",
                      source.str(), source.name(), destination.name());
  }
  return {};
}

// Reads every source (same registry and repository as `destination`, since a registry accepts an
// index only when its children are in the index's repository), PUTs the index under
// destination's tag and returns its digest.
Result<oci::Digest> create_index(registry::Client& client, const registry::Reference& destination,
                                 const std::vector<registry::Reference>& sources) {
  for (const auto& source : sources) HWIMG_TRY(check_same_repository(destination, source));
  image::RegistryReader reader(client, destination);
  std::vector<build::VariantSource> variants;
  for (const auto& source : sources) {
    HWIMG_TRY_ASSIGN(variants.emplace_back(), build::read_variant_source(reader, source.str(), source.manifest_reference()));
  }
  HWIMG_TRY_ASSIGN(const auto index, build::assemble_index(variants));
  return with_context(client.put_manifest(destination, oci::to_json(index), oci::media_type::index),
                      "failed to push the index " + destination.str());
}

}  // namespace

std::string push_summary_line(const registry::PushSummary& summary) {
  const auto relayed = summary.blobs_relayed == 0 ? std::string()
                                                 : fmt::format(" (of them {} relayed from another registry)",
                                                               summary.blobs_relayed);
  return fmt::format("pushed {}@{}: {} blobs uploaded ({:.1f} MiB){}, {} mounted, {} already present; {} manifests "
                     "pushed, {} already present; {} tags; {} compat artifacts attached; {} requests",
                     summary.reference, summary.digest.str(), summary.blobs_uploaded,
                     static_cast<double>(summary.bytes_uploaded) / (1 << 20), relayed, summary.blobs_mounted,
                     summary.blobs_present, summary.manifests_pushed, summary.manifests_present, summary.tags.size(),
                     summary.compat_artifacts, summary.requests);
}

std::string push_summary_json(const registry::PushSummary& summary) {
  const nlohmann::ordered_json out{
      {"reference", summary.reference},
      {"digest", summary.digest.str()},
      {"blobs",
       {{"uploaded", summary.blobs_sent()},
        {"relayed", summary.blobs_relayed},
        {"bytes_uploaded", summary.bytes_uploaded},
        {"mounted", summary.blobs_mounted},
        {"present", summary.blobs_present}}},
      {"manifests", {{"pushed", summary.manifests_pushed}, {"present", summary.manifests_present}}},
      {"tags", summary.tags},
      {"compat_artifacts", summary.compat_artifacts},
      {"requests", summary.requests}};
  return out.dump(2) + "\n";
}

Result<int> run_push(const PushArguments& arguments) {
  if (!oci::is_layout_reference(arguments.source)) {
    const auto layout = image::layout_written_bare(arguments.source);
    return fail_usage("failed to push {}: the source must be an image layout, oci:DIR[:TAG]{}", arguments.source,
                      layout ? fmt::format(" (did you mean {}?)", *layout) : "");
  }
  auto layout = oci::parse_layout_reference(arguments.source);
  if (!layout) return std::unexpected(Error{layout.error().message, ExitCode::usage});
  HWIMG_TRY_ASSIGN(const auto ref, usage_reference(arguments.destination));
  TerminalOutput output(arguments.format == DataFormat::text ? Progress::shown : Progress::hidden,
                        arguments.registry.verbose);
  const auto options = client_options(arguments.registry, output);
  HWIMG_TRY_ASSIGN(auto plan, registry::plan_push_to(layout->directory, layout->tag, ref));
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(options));
  HWIMG_TRY_ASSIGN(auto summary, compat::push_with_artifacts(client, std::move(plan), ref, {}, arguments.compat, output));
  output.clear_status();
  fmt::print("{}", arguments.format == DataFormat::json ? push_summary_json(summary)
                                                        : push_summary_line(summary) + "\n");
  return 0;
}

Result<int> run_tag(const std::string& reference, const std::vector<std::string>& new_tags, DataFormat format,
                    const RegistryFlags& flags) {
  HWIMG_TRY_ASSIGN(const auto ref, usage_reference(reference));
  for (const auto& t : new_tags) {
    if (auto r = registry::validate_registry_tag(t); !r) return std::unexpected(Error{r.error().message, ExitCode::usage});
  }
  TerminalOutput output(Progress::hidden, flags.verbose);
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(client_options(flags, output)));
  HWIMG_TRY_ASSIGN(const auto digest, client.tag(ref, new_tags));
  if (format == DataFormat::json) {
    nlohmann::ordered_json references = nlohmann::ordered_json::array();
    for (const auto& t : new_tags) references.push_back(ref.with_tag(t).str());
    fmt::print("{}\n", nlohmann::ordered_json{{"digest", digest.str()}, {"references", references}}.dump(2));
    return 0;
  }
  for (const auto& t : new_tags) fmt::print("{}@{}\n", ref.with_tag(t).str(), digest.str());
  return 0;
}

Result<int> run_login(const std::string& registry, const std::string& username, std::istream& password_input,
                      const RegistryFlags& flags) {
  auto parsed = registry::parse_reference(registry + "/x");
  if (!parsed || parsed->registry != registry) {
    return fail_usage("failed to log in: \"{}\" is not a registry host[:port]", registry);
  }
  if (username.empty()) return fail_usage("failed to log in to {}: the username is empty", registry);
  std::string password(std::istreambuf_iterator<char>(password_input), {});
  while (!password.empty() && (password.back() == '\n' || password.back() == '\r')) password.pop_back();
  if (password.empty()) return fail_usage("failed to log in to {}: no password on standard input", registry);
  const registry::Credentials credentials{username, password, {}, {}};
  TerminalOutput output(Progress::hidden, flags.verbose);
  const auto options = client_options(flags, output);
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(options));
  HWIMG_TRY(client.check_login(registry, credentials));
  HWIMG_TRY(registry::store_credentials(options.docker_config_dir, registry, credentials));
  fmt::print("login succeeded for {}; credentials stored for {}\n", registry, registry::credential_key(registry));
  return 0;
}

Result<int> run_index_create(const std::string& destination, const std::vector<std::string>& sources,
                             DataFormat format, const RegistryFlags& flags) {
  HWIMG_TRY_ASSIGN(const auto target, usage_reference(destination));
  if (target.digest || target.tag.empty()) {
    return fail_usage("failed to create the index {}: name it by tag, REGISTRY/REPO:TAG", destination);
  }
  std::vector<registry::Reference> references;
  for (const auto& text : sources) {
    HWIMG_TRY_ASSIGN(references.emplace_back(), usage_reference(text));
  }
  if (references.empty()) return fail_usage("failed to create the index {}: no --from variant", destination);
  TerminalOutput output(Progress::hidden, flags.verbose);
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(client_options(flags, output)));
  HWIMG_TRY_ASSIGN(const auto digest, create_index(client, target, references));
  if (format == DataFormat::json) {
    const nlohmann::ordered_json out{{"reference", target.str()}, {"digest", digest.str()}, {"variants", sources}};
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("{}@{}\n", target.str(), digest.str());
  }
  return 0;
}

}  // namespace hwimg::commands
