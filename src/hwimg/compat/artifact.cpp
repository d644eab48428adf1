#include "hwimg/compat/artifact.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "hwimg/compat/nfd_spec.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/oci/documents.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/registry/referrers.hpp"
#include "hwimg/util/thread_pool.hpp"

namespace hwimg::compat {
namespace {

oci::Descriptor blob_descriptor(std::string_view media_type, std::string_view bytes) {
  oci::Descriptor out;
  out.media_type = std::string(media_type);
  out.digest = oci::Digest::sha256_of(bytes);
  out.size = static_cast<std::int64_t>(bytes.size());
  return out;
}

// The variants to describe: the index's manifests with org.hwimg.* pairs, or the manifest itself.
Result<std::vector<oci::Descriptor>> described_variants(registry::Client& client, const registry::Reference& root) {
  HWIMG_TRY_ASSIGN(const auto fetched, client.get_manifest(root));
  std::vector<oci::Descriptor> out;
  if (oci::media_type::is_index(fetched.media_type)) {
    HWIMG_TRY_ASSIGN(const auto index, oci::parse_index(fetched.bytes));
    for (const auto& d : index.manifests) {
      if (oci::media_type::is_manifest(d.media_type) && oci::annotation::has_hwimg_pairs(d.annotations)) {
        out.push_back(d);
      }
    }
    return out;
  }
  HWIMG_TRY_ASSIGN(const auto manifest, oci::parse_manifest(fetched.bytes));
  if (oci::annotation::has_hwimg_pairs(manifest.annotations)) {
    auto self = blob_descriptor(fetched.media_type, fetched.bytes);
    self.annotations = manifest.annotations;
    out.push_back(std::move(self));
  }
  return out;
}

// Debian's 2.8.2 refuses right bytes (DIGEST_INVALID) or a manifest whose blob it just had
// (BLOB_UNKNOWN) while another push of the same blob rewrites its link, as the pusher knows
// (registry/push.cpp): the variant's blobs are checked and its artifact put again after a pause.
constexpr unsigned max_race_attempts = 5;
constexpr std::size_t max_attach_workers = 4;

bool registry_race(const Error& error) {
  return error.message.find("DIGEST_INVALID") != std::string::npos ||
         error.message.find("BLOB_UNKNOWN") != std::string::npos;
}

// The shared empty config is put before the first attempt; a retry puts it again with the rest.
Result<void> attach_one(registry::Client& client, const registry::Reference& repository,
                        const oci::Descriptor& variant, const std::string& yaml, unsigned attempt) {
  if (attempt > 0) HWIMG_TRY(client.push_small_blob(repository, empty_config));
  HWIMG_TRY(client.push_small_blob(repository, yaml));
  HWIMG_TRY(registry::attach_referrer(client, repository, artifact_manifest(variant, yaml)));
  return {};
}

// Whether the variant's artifact for `yaml` is listed among its referrers already.
Result<bool> artifact_listed(registry::Client& client, const registry::Reference& repository,
                             const oci::Descriptor& variant, const std::string& yaml) {
  const auto digest = oci::Digest::sha256_of(artifact_manifest(variant, yaml));
  HWIMG_TRY_ASSIGN(const auto listed, registry::list_referrers(client, repository, variant.digest, nfd_artifact_type));
  return std::ranges::any_of(listed, [&](const oci::Descriptor& d) { return d.digest == digest; });
}

}  // namespace

std::string artifact_manifest(const oci::Descriptor& subject, std::string_view yaml) {
  oci::Manifest manifest;
  manifest.artifact_type = std::string(nfd_artifact_type);
  manifest.config = blob_descriptor(oci::media_type::empty, empty_config);
  manifest.layers.push_back(blob_descriptor(nfd_spec_media_type, yaml));
  // Only what identifies the subject: its platform and annotations are the subject's own business.
  manifest.subject = oci::Descriptor{subject.media_type, subject.digest, subject.size, {}, {}, {}};
  return oci::to_json(manifest);
}

Result<Attached> attach_artifacts(registry::Client& client, const registry::ClientOptions& options,
                                  const registry::Reference& repository, const oci::Digest& root, Pushed pushed) {
  auto root_ref = repository;
  root_ref.tag.clear();
  root_ref.digest = root;
  const auto what = fmt::format("attach NFD compatibility artifacts to {}", root_ref.str());
  HWIMG_TRY_ASSIGN(const auto described, with_context(described_variants(client, root_ref), "failed to " + what));
  std::vector<oci::Descriptor> variants;
  std::vector<std::string> specs;
  for (const auto& variant : described) {
    HWIMG_TRY_ASSIGN(auto yaml, nfd_spec_yaml(variant));
    // After a push that changed nothing the artifacts are most likely listed already: a look on
    // this client's warm connection costs less than the workers' new ones and a second put.
    if (pushed == Pushed::unchanged) {
      HWIMG_TRY_ASSIGN(const auto listed, with_context(artifact_listed(client, repository, variant, yaml),
                                                       "failed to " + what));
      if (listed) continue;
    }
    variants.push_back(variant);
    specs.push_back(std::move(yaml));
  }
  // The config all artifacts share goes up once, before the workers would race on it.
  if (!variants.empty()) HWIMG_TRY(with_context(client.push_small_blob(repository, empty_config), "failed to " + what));

  const auto attach_with_retries = [&](registry::Client& worker, std::size_t i) -> Result<void> {
    for (unsigned attempt = 0;; ++attempt) {
      auto attached = attach_one(worker, repository, variants[i], specs[i], attempt);
      if (attached || !registry_race(attached.error()) || attempt + 1 >= max_race_attempts) return attached;
      std::this_thread::sleep_for(std::chrono::milliseconds(100) * (1U << attempt));
    }
  };
  // Each artifact is a handful of small sequential requests: a few workers, each its own client,
  // take the variants in turn, so eight variants cost two rounds rather than eight.
  const auto workers = std::min<std::size_t>(variants.size(), max_attach_workers);
  std::vector<std::future<Result<std::uint64_t>>> results;
  if (workers > 0) {
    util::ThreadPool pool(static_cast<unsigned>(workers));
    for (std::size_t w = 0; w < workers; ++w) {
      results.push_back(pool.submit([&, w]() -> Result<std::uint64_t> {
        HWIMG_TRY_ASSIGN(auto worker, registry::Client::create(options));
        for (std::size_t i = w; i < variants.size(); i += workers) HWIMG_TRY(attach_with_retries(worker, i));
        return worker.requests();
      }));
    }
  }
  Attached out{described.size(), 0};
  for (auto& result : results) {
    auto r = result.get();
    if (!r) return std::unexpected(r.error().context("failed to " + what));
    out.requests += *r;
  }
  return out;
}

void attach_after_push(registry::Client& client, const registry::ClientOptions& options,
                       const registry::Reference& destination, registry::PushSummary& pushed, util::Output& output) {
  const auto attached = attach_artifacts(client, options, destination, pushed.digest,
                                         pushed.manifests_pushed == 0 ? Pushed::unchanged : Pushed::changed);
  if (attached) {
    pushed.compat_artifacts = attached->artifacts;
    pushed.requests = client.requests() + attached->requests;
  } else {
    output.warning(fmt::format("{} (the image is pushed; --no-compat skips the artifacts)", attached.error().message));
    pushed.requests = client.requests();
  }
}

}  // namespace hwimg::compat
