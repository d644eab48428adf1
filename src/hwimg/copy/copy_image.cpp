#include "hwimg/copy/copy_image.hpp"

#include <fmt/format.h>

#include "hwimg/copy/layout_destination.hpp"
#include "hwimg/image/documents.hpp"
#include "hwimg/image/open_image.hpp"
#include "hwimg/oci/media_types.hpp"
#include "hwimg/select/image_source.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::copy {
namespace {

// The documents to write: the root (rewritten when variants are left out) and the kept manifests,
// each with the tag it goes under.
Result<registry::PushPlan> plan_copy(image::ImageReader& reader, const oci::Descriptor& root,
                                     const std::vector<select::Candidate>& candidates,
                                     const std::vector<std::size_t>& kept, const std::string& tag) {
  const auto what = "copy " + reader.name();
  HWIMG_TRY_ASSIGN(auto root_bytes, reader.read(root));
  if (!oci::media_type::is_index(root.media_type)) {
    HWIMG_TRY_ASSIGN(auto plan, registry::PushPlan::from_documents(what, {root, std::move(root_bytes), tag}, {}));
    plan.order_blobs();
    return plan;
  }
  std::vector<oci::Descriptor> wanted;
  for (const auto position : kept) wanted.push_back(candidates[position].descriptor);
  HWIMG_TRY_ASSIGN(auto manifests, reader.read_all(wanted));
  std::vector<registry::PlannedManifest> variants;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const auto id = select::variant_id(candidates[kept[i]]);
    variants.push_back({wanted[i], std::move(manifests[i]), id.empty() ? "" : tag + "-" + id});
  }
  registry::PlannedManifest planned_root{root, std::move(root_bytes), tag};  // unchanged bytes, unchanged digest
  if (kept.size() != candidates.size()) {
    HWIMG_TRY_ASSIGN(auto index, with_context(oci::parse_index(planned_root.bytes),
                                              "failed to read index " + root.digest.str()));
    index.manifests = wanted;
    planned_root.bytes = oci::to_json(index);
    planned_root.descriptor = {root.media_type, oci::Digest::sha256_of(planned_root.bytes),
                               static_cast<std::int64_t>(planned_root.bytes.size()), {}, {}, {}};
  }
  HWIMG_TRY_ASSIGN(auto plan, registry::PushPlan::from_documents(what, std::move(planned_root), std::move(variants)));
  plan.order_blobs();
  return plan;
}

// The referrers of the kept variants (and of the index when it is copied unchanged), as the source
// keeps them (docs/nfd.md#referrers). Asked before the variants' manifests are read: a registry
// reads those in the same round.
Result<std::vector<std::string>> kept_referrers(const image::OpenedImage& source,
                                                const std::vector<select::Candidate>& candidates,
                                                const std::vector<std::size_t>& kept) {
  std::vector<oci::Digest> subjects;
  for (const auto position : kept) subjects.push_back(candidates[position].descriptor.digest);
  if (kept.size() == candidates.size()) subjects.push_back(source.root.digest);
  return source.reader->referrers(subjects);
}

}  // namespace

Result<CopySummary> copy_image(const CopyRequest& request) {
  auto parsed = image::parse_image_reference(request.destination);
  if (!parsed) return fail_usage("{}", parsed.error().message);
  const auto& destination = *parsed;
  if (destination.digest) {
    return fail_usage("failed to copy to {}: name a tag, not a digest (the digest comes from the content)",
                      request.destination);
  }
  // One client reads and writes: a copy within a registry reuses its connections and tokens.
  HWIMG_TRY_ASSIGN(auto client, registry::Client::create(request.registry));
  HWIMG_TRY_ASSIGN(auto source, select::load_image_source(request.source, {request.registry, {}, &client}));
  auto& reader = *source.image.reader;
  HWIMG_TRY_ASSIGN(const auto kept, select::filter_variants(source.candidates, request.filter));
  const auto tag = !destination.tag.empty()         ? destination.tag
                   : !source.image.reference.tag.empty() ? source.image.reference.tag
                                                          : std::string("latest");
  HWIMG_TRY_ASSIGN(auto referrers, kept_referrers(source.image, source.candidates, kept));
  HWIMG_TRY_ASSIGN(auto plan, plan_copy(reader, source.image.root, source.candidates, kept, tag));
  for (auto& bytes : referrers) HWIMG_TRY(plan.add_referrer(std::move(bytes)));
  plan.order_blobs();

  CopySummary summary;
  summary.variants_total = source.candidates.size();
  summary.variants_kept = kept.size();
  summary.digest = plan.root.descriptor.digest;
  summary.referrers = plan.referrers.size();
  if (destination.kind == image::SourceKind::layout) {
    HWIMG_TRY(write_to_layout(source.image, request.registry, plan, destination.directory, summary));
    summary.destination = fmt::format("oci:{}:{}", destination.directory.string(), tag);
    return summary;
  }
  registry::ExternalBlobs external;
  if (source.image.reference.kind == image::SourceKind::layout) {
    plan.layout = source.image.reference.directory;
  } else {
    for (const auto& blob : plan.blobs) external.emplace(blob.digest, source.image.reference.registry);
  }
  const auto target = destination.registry.with_tag(tag);
  HWIMG_TRY_ASSIGN(summary.pushed, client.push_plan(std::move(plan), target, external));
  if (!summary.pushed->referrer_failures.empty()) {
    return fail("failed to copy the referrers to {}: {}", target.str(), util::join(summary.pushed->referrer_failures, "; "));
  }
  summary.destination = summary.pushed->reference;
  return summary;
}

}  // namespace hwimg::copy
