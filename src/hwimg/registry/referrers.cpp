#include "hwimg/registry/referrers.hpp"

#include <algorithm>

#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"

namespace hwimg::registry {
namespace {

std::vector<oci::Descriptor> of_type(std::vector<oci::Descriptor> descriptors, std::string_view artifact_type) {
  if (!artifact_type.empty()) {
    std::erase_if(descriptors, [&](const auto& d) { return d.artifact_type != artifact_type; });
  }
  return descriptors;
}

}  // namespace

Result<oci::Index> referrers_tag_index(const Response& answer, const Reference& tagged, const oci::Digest& subject) {
  const auto what = fmt::format("read the referrers of {} from {}", subject.str(), tagged.str());
  if (answer.ok() && answer.status == 404) return oci::Index{};
  if (!answer.ok() || answer.status != 200) return fail("failed to {}: {}", what, describe(answer));
  HWIMG_TRY_ASSIGN(const auto manifest, with_context(manifest_from_answer(answer, tagged), "failed to " + what));
  return with_context(read_referrers_index(manifest.media_type, manifest.bytes), "failed to " + what);
}

std::string referrers_tag(const oci::Digest& subject) { return "sha256-" + subject.hex(); }

bool is_referrers_tag(std::string_view tag) {
  const auto dash = tag.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash > 32 || tag.size() - dash - 1 != 64) return false;
  const auto algorithm = tag.substr(0, dash);
  const auto hex = tag.substr(dash + 1);
  return std::ranges::all_of(algorithm, [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }) &&
         std::ranges::all_of(hex, [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

oci::Descriptor referrer_descriptor(std::string_view bytes, const oci::Manifest& manifest) {
  oci::Descriptor out{std::string(oci::media_type::manifest), oci::Digest::sha256_of(bytes),
                      static_cast<std::int64_t>(bytes.size()), {}, manifest.annotations, {}};
  out.artifact_type = manifest.artifact_type.empty() ? manifest.config.media_type : manifest.artifact_type;
  return out;
}

Result<oci::Index> read_referrers_index(std::string_view content_type, std::string_view body) {
  // The media type is a header's; parameters after ';' do not change it.
  const auto media_type = content_type.substr(0, content_type.find(';'));
  if (!oci::media_type::is_index(media_type)) {
    return fail("the referrers tag holds a {}, not an image index", media_type.empty() ? "document without a type" : media_type);
  }
  return oci::parse_index(body);
}

bool add_referrers(oci::Index& index, const std::vector<oci::Descriptor>& referrers) {
  bool added = false;
  for (const auto& referrer : referrers) {
    if (std::ranges::any_of(index.manifests, [&](const auto& d) { return d.digest == referrer.digest; })) continue;
    index.manifests.push_back(referrer);
    added = true;
  }
  if (added) index.media_type = std::string(oci::media_type::index);
  return added;
}

Result<std::vector<oci::Descriptor>> list_referrers(Client& client, const Reference& repository,
                                                    const oci::Digest& subject, std::string_view artifact_type) {
  HWIMG_TRY_ASSIGN(auto lists, list_referrers_of(client, repository, {subject}, artifact_type));
  return std::move(lists.front());
}

std::vector<std::string> referrers_paths(const std::vector<oci::Digest>& subjects, std::string_view artifact_type) {
  // The API and the tag are asked at once, the tag's answer used where the API's is 404: one round
  // trip instead of two on the registries without the API (distribution 2.8 among them).
  std::vector<std::string> paths;
  for (const auto& subject : subjects) {
    paths.push_back("referrers/" + subject.str() +
                    (artifact_type.empty() ? "" : "?artifactType=" + std::string(artifact_type)));
  }
  for (const auto& subject : subjects) paths.push_back("manifests/" + referrers_tag(subject));
  return paths;
}

Result<std::vector<std::vector<oci::Descriptor>>> referrers_from_answers(const Reference& repository,
                                                                         const std::vector<oci::Digest>& subjects,
                                                                         std::string_view artifact_type,
                                                                         const std::vector<Response>& answers) {
  std::vector<std::vector<oci::Descriptor>> out(subjects.size());
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    const auto& api = answers.at(i);
    oci::Index index;
    if (api.status == 404) {
      HWIMG_TRY_ASSIGN(index, referrers_tag_index(answers.at(subjects.size() + i),
                                                  repository.with_tag(referrers_tag(subjects[i])), subjects[i]));
    } else {
      const auto what = fmt::format("list the referrers of {} in {}", subjects[i].str(), repository.name());
      if (api.status != 200) return fail("failed to {}: {}", what, describe(api));
      HWIMG_TRY_ASSIGN(index, with_context(oci::parse_index(api.body), "failed to " + what));
    }
    // A registry may ignore the filter (it says so by leaving out OCI-Filters-Applied).
    out[i] = of_type(std::move(index.manifests), artifact_type);
  }
  return out;
}

Result<std::vector<std::vector<oci::Descriptor>>> list_referrers_of(Client& client, const Reference& repository,
                                                                    const std::vector<oci::Digest>& subjects,
                                                                    std::string_view artifact_type) {
  HWIMG_TRY_ASSIGN(const auto answers,
                   client.forward_all(repository, ReadMethod::get, referrers_paths(subjects, artifact_type),
                                      {manifest_accept_header()}, oci::max_manifest_size));
  return referrers_from_answers(repository, subjects, artifact_type, answers);
}

}  // namespace hwimg::registry
