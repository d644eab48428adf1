#include "hwimg/copy/report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace hwimg::copy {

std::string summary_line(const CopyRequest& request, const CopySummary& summary) {
  const auto variants = fmt::format("{} of {} variant{}", summary.variants_kept, summary.variants_total,
                                    summary.variants_total == 1 ? "" : "s");
  if (const auto& pushed = summary.pushed) {
    return fmt::format("copied {} to {}@{}: {}; blobs: {} mounted, {} streamed from the source registry, {} "
                       "uploaded, {} already there; {} manifests written, {} already there; {} tags; {} referrers",
                       request.source, summary.destination, summary.digest.str(), variants, pushed->blobs_mounted,
                       pushed->blobs_relayed, pushed->blobs_sent(), pushed->blobs_present,
                       pushed->manifests_pushed, pushed->manifests_present, pushed->tags.size(), summary.referrers);
  }
  return fmt::format("copied {} to {}@{}: {}; {} blobs copied ({:.1f} MiB), {} already there; {} referrers",
                     request.source, summary.destination, summary.digest.str(), variants, summary.blobs_copied,
                     static_cast<double>(summary.bytes_copied) / (1 << 20), summary.blobs_present,
                     summary.referrers);
}

std::string render_json(const CopyRequest& request, const CopySummary& summary) {
  nlohmann::ordered_json out;
  out["source"] = request.source;
  out["destination"] = summary.destination;
  out["digest"] = summary.digest.str();
  out["variants"] = {{"kept", summary.variants_kept}, {"total", summary.variants_total}};
  if (const auto& pushed = summary.pushed) {
    out["blobs"] = {{"mounted", pushed->blobs_mounted},
                    {"streamed", pushed->blobs_relayed},
                    {"uploaded", pushed->blobs_sent()},
                    {"present", pushed->blobs_present}};
    out["manifests"] = {{"written", pushed->manifests_pushed}, {"present", pushed->manifests_present}};
    out["tags"] = pushed->tags;
    out["referrers"] = summary.referrers;
  } else {
    out["blobs"] = {{"copied", summary.blobs_copied},
                    {"bytes_copied", summary.bytes_copied},
                    {"present", summary.blobs_present}};
    out["referrers"] = summary.referrers;
  }
  return out.dump(2) + "\n";
}

}  // namespace hwimg::copy
