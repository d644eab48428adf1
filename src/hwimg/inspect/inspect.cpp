#include "hwimg/inspect/inspect.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "hwimg/image/documents.hpp"
#include "hwimg/inspect/attached_referrers.hpp"
#include "hwimg/inspect/config_summary.hpp"
#include "hwimg/inspect/detail/config_json.hpp"
#include "hwimg/inspect/detail/verification_json.hpp"
#include "hwimg/inspect/variant_tags.hpp"
#include "hwimg/inspect/verification_view.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/util/byte_size.hpp"

namespace hwimg::inspect {
namespace {

nlohmann::json descriptor_json(const oci::Descriptor& d) {
  return {{"mediaType", d.media_type}, {"digest", d.digest.str()}, {"size", d.size}};
}

nlohmann::json referrers_json(const std::vector<oci::Descriptor>& referrers) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& referrer : referrers) {
    auto entry = descriptor_json(referrer);
    entry["artifactType"] = referrer.artifact_type;
    entry["annotations"] = referrer.annotations;
    out.push_back(std::move(entry));
  }
  return out;
}

std::int64_t layers_size(const VariantView& variant) {
  std::int64_t total = 0;
  for (const auto& layer : variant.layers) total += layer.size;
  return total;
}

std::string referrer_line(const oci::Descriptor& referrer, std::string_view indent) {
  return fmt::format("{}referrer {} {}\n", indent, referrer.digest.short_str(), referrer.artifact_type);
}

// The tags, then the referrers: the two lists that cost a request each on a registry, and which an
// image without them lacks rather than breaks, so a failure is a note and not an error.
void add_tags_and_referrers(ImageView& view, std::string_view tag, image::ImageReader& reader) {
  const bool index = oci::media_type::is_index(view.root.media_type);
  if (const auto listed = reader.list_tags(listed_tag_limit); !listed) {
    view.tags_problem = listed.error().message;
  } else {
    for (auto& variant : view.variants) {
      const auto id = variant.manifest.annotation(oci::annotation::variant);
      // A lone manifest is named by the tag it was asked by; the variant convention is an index's.
      variant.tags = variant_tags(*listed, variant.manifest.digest, index ? tag : "", index ? id : std::nullopt);
      if (!index && !tag.empty() && std::ranges::find(variant.tags, tag) == variant.tags.end()) {
        variant.tags.insert(variant.tags.begin(), std::string(tag));
      }
    }
  }
  std::vector<oci::Digest> subjects;
  if (index) subjects.push_back(view.root.digest);
  for (const auto& variant : view.variants) subjects.push_back(variant.manifest.digest);
  const auto referrers = attached_referrers(reader, subjects);
  if (!referrers) {
    view.referrers_problem = referrers.error().message;
    return;
  }
  const auto of = [&](const oci::Digest& subject) {
    const auto found = referrers->find(subject);
    return found == referrers->end() ? std::vector<oci::Descriptor>{} : found->second;
  };
  if (index) view.referrers = of(view.root.digest);
  for (auto& variant : view.variants) variant.referrers = of(variant.manifest.digest);
}

std::string render_json(const ImageView& view, const std::vector<verify::VariantVerification>* verification) {
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& v : view.variants) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& layer : v.layers) layers.push_back(descriptor_json(layer));
    nlohmann::json platform = nullptr;
    if (v.manifest.platform) {
      platform = {{"os", v.manifest.platform->os}, {"architecture", v.manifest.platform->architecture}};
      if (!v.manifest.platform->variant.empty()) platform["variant"] = v.manifest.platform->variant;
    }
    const auto id = v.manifest.annotation(oci::annotation::variant);
    variants.push_back({{"variant", id ? nlohmann::json(*id) : nlohmann::json(nullptr)},
                        {"digest", v.manifest.digest.str()},
                        {"size", v.manifest.size},
                        {"tags", v.tags},
                        {"platform", platform},
                        {"annotations", v.manifest.annotations},
                        {"config", descriptor_json(v.config)},
                        {"imageConfig", v.image_config ? detail::config_json(*v.image_config) : nlohmann::json(nullptr)},
                        {"layers", layers},
                        {"layersSize", layers_size(v)},
                        {"referrers", referrers_json(v.referrers)}});
  }
  nlohmann::json out = {{"reference", view.reference},
                        {"digest", view.root.digest.str()},
                        {"mediaType", view.root.media_type},
                        {"annotations", view.annotations},
                        {"referrers", referrers_json(view.referrers)},
                        {"variants", variants},
                        {"notes", view.notes()}};
  if (verification != nullptr) out["verify"] = detail::verification_json(*verification);
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_variant(const ImageView& view, const VariantView& v) {
  auto text = fmt::format("{:<32} {:<18} sha256:{:<13} {:>7} {:>17}\n",
                          v.manifest.annotation(oci::annotation::variant).value_or("-"),
                          v.manifest.platform ? v.manifest.platform->str() : "-", v.manifest.digest.short_hex(),
                          v.layers.size(), util::format_byte_size(static_cast<std::uint64_t>(layers_size(v))));
  for (const auto& tag : v.tags) text += fmt::format("    tag {}:{}\n", view.source, tag);
  if (v.tags.empty()) text += fmt::format("    no tag; by digest {}@{}\n", view.source, v.manifest.digest.str());
  for (const auto& [key, value] : v.manifest.annotations) {
    if (key != oci::annotation::variant) text += fmt::format("    {} = {}\n", key, value);
  }
  if (v.image_config) {
    for (const auto& line : config_lines(*v.image_config, v.manifest.annotations)) text += "    " + line + "\n";
  }
  for (const auto& layer : v.layers) {
    text += fmt::format("    layer {} {:>11}  {}\n", layer.digest.short_str(),
                        util::format_byte_size(static_cast<std::uint64_t>(layer.size)), layer.media_type);
  }
  for (const auto& referrer : v.referrers) text += referrer_line(referrer, "    ");
  return text;
}

}  // namespace

std::vector<std::string> ImageView::notes() const {
  std::vector<std::string> out;
  if (tags_problem) out.push_back("tags not listed: " + *tags_problem);
  if (referrers_problem) out.push_back("referrers not listed: " + *referrers_problem);
  return out;
}

Result<ImageView> load_image_view(std::string reference, std::string_view tag, image::ImageReader& reader,
                                  const oci::Descriptor& root) {
  ImageView view{std::move(reference), reader.name(), root, {}, {}, {}, std::nullopt, std::nullopt};
  HWIMG_TRY_ASSIGN(const auto images, image::list_images(reader, root, &view.annotations));
  for (const auto& descriptor : images) {
    HWIMG_TRY_ASSIGN(auto manifest, image::read_manifest(reader, descriptor));
    if (!oci::media_type::is_index(root.media_type)) view.annotations = manifest.annotations;
    VariantView variant{descriptor, manifest.config, std::move(manifest.layers), {}, std::nullopt, {}};
    if (is_image_config(manifest.config.media_type)) {
      HWIMG_TRY_ASSIGN(variant.image_config, image::read_config(reader, manifest));
    }
    view.variants.push_back(std::move(variant));
  }
  add_tags_and_referrers(view, tag, reader);
  return view;
}

std::string render(const ImageView& view, Format format, const std::vector<verify::VariantVerification>* verification) {
  if (format == Format::json) return render_json(view, verification);
  std::string text = fmt::format("{}\n  {} {} ({} variant{})\n", view.reference,
                                 oci::media_type::is_index(view.root.media_type) ? "index" : "manifest",
                                 view.root.digest.str(), view.variants.size(), view.variants.size() == 1 ? "" : "s");
  for (const auto& [key, value] : view.annotations) {
    text += fmt::format("  {} = {}\n", key, value);
  }
  for (const auto& referrer : view.referrers) text += referrer_line(referrer, "  ");
  text += fmt::format("\n{:<32} {:<18} {:<20} {:>7} {:>17}\n", "VARIANT", "PLATFORM", "MANIFEST", "LAYERS",
                      "SIZE (compressed)");
  std::size_t referrer_count = view.referrers.size();
  for (const auto& v : view.variants) {
    text += render_variant(view, v);
    referrer_count += v.referrers.size();
  }
  text += "\nsizes are the layers as stored and pulled (compressed); unpacked they take more room\n";
  if (referrer_count == 0 && !view.referrers_problem) {
    text += "no referrers (signatures, SBOMs, NFD compatibility artifacts) are attached\n";
  }
  for (const auto& note : view.notes()) text += "note: " + note + "\n";
  if (verification != nullptr) text += verification_table(*verification);
  return text;
}

}  // namespace hwimg::inspect
