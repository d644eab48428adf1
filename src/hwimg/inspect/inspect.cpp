#include "hwimg/inspect/inspect.hpp"

#include <nlohmann/json.hpp>

#include "hwimg/image/documents.hpp"
#include "hwimg/inspect/detail/verification_json.hpp"
#include "hwimg/inspect/verification_view.hpp"
#include "hwimg/oci/annotations.hpp"
#include "hwimg/util/byte_size.hpp"

namespace hwimg::inspect {
namespace {

nlohmann::json descriptor_json(const oci::Descriptor& d) {
  return {{"mediaType", d.media_type}, {"digest", d.digest.str()}, {"size", d.size}};
}

}  // namespace

Result<ImageView> load_image_view(std::string reference, image::ImageReader& reader, const oci::Descriptor& root) {
  ImageView view{std::move(reference), root, {}, {}};
  HWIMG_TRY_ASSIGN(const auto images, image::list_images(reader, root, &view.annotations));
  for (const auto& descriptor : images) {
    HWIMG_TRY_ASSIGN(auto manifest, image::read_manifest(reader, descriptor));
    if (!oci::media_type::is_index(root.media_type)) view.annotations = manifest.annotations;
    view.variants.push_back(VariantView{descriptor, manifest.config, std::move(manifest.layers)});
  }
  return view;
}

std::string render(const ImageView& view, Format format, const std::vector<verify::VariantVerification>* verification) {
  if (format == Format::json) {
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
                          {"platform", platform},
                          {"annotations", v.manifest.annotations},
                          {"config", descriptor_json(v.config)},
                          {"layers", layers}});
    }
    nlohmann::json out = {{"reference", view.reference},
                          {"digest", view.root.digest.str()},
                          {"mediaType", view.root.media_type},
                          {"annotations", view.annotations},
                          {"variants", variants}};
    if (verification != nullptr) out["verify"] = detail::verification_json(*verification);
    return out.dump(2) + "\n";
  }
  std::string text = fmt::format("{}\n  {} {} ({} variant{})\n", view.reference,
                                 oci::media_type::is_index(view.root.media_type) ? "index" : "manifest",
                                 view.root.digest.str(), view.variants.size(), view.variants.size() == 1 ? "" : "s");
  for (const auto& [key, value] : view.annotations) {
    text += fmt::format("  {} = {}\n", key, value);
  }
  text += fmt::format("\n{:<32} {:<18} {:<20} {:>7} {:>11}\n", "VARIANT", "PLATFORM", "MANIFEST", "LAYERS", "SIZE");
  for (const auto& v : view.variants) {
    std::int64_t total = 0;
    for (const auto& layer : v.layers) total += layer.size;
    text += fmt::format("{:<32} {:<18} sha256:{:<13} {:>7} {:>11}\n",
                        v.manifest.annotation(oci::annotation::variant).value_or("-"),
                        v.manifest.platform ? v.manifest.platform->str() : "-", v.manifest.digest.short_hex(),
                        v.layers.size(), util::format_byte_size(static_cast<std::uint64_t>(total)));
    for (const auto& [key, value] : v.manifest.annotations) {
      if (key != oci::annotation::variant) text += fmt::format("    {} = {}\n", key, value);
    }
    for (const auto& layer : v.layers) {
      text += fmt::format("    layer sha256:{} {:>11}  {}\n", layer.digest.short_hex(), util::format_byte_size(static_cast<std::uint64_t>(layer.size)),
                          layer.media_type);
    }
  }
  if (verification != nullptr) text += verification_table(*verification);
  return text;
}

}  // namespace hwimg::inspect
