#include "hwimg/inspect/inspect.hpp"

#include <nlohmann/json.hpp>

#include "hwimg/oci/layout.hpp"

namespace hwimg::inspect {
namespace {

std::string human_size(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  auto value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

nlohmann::json descriptor_json(const oci::Descriptor& d) {
  return {{"mediaType", d.media_type}, {"digest", d.digest.str()}, {"size", d.size}};
}

Result<VariantView> load_variant(const oci::Descriptor& descriptor, const BlobReader& read) {
  auto bytes = read(descriptor);
  if (!bytes) return std::unexpected(bytes.error());
  auto manifest = oci::parse_manifest(*bytes);
  if (!manifest) return std::unexpected(manifest.error());
  return VariantView{descriptor, manifest->config, manifest->layers};
}

}  // namespace

Result<ImageView> load_image_view(const std::string& reference, const oci::Descriptor& root, const BlobReader& read) {
  ImageView view{reference, root, {}, {}};
  if (oci::media_type::is_index(root.media_type)) {
    auto bytes = read(root);
    if (!bytes) return std::unexpected(bytes.error());
    auto index = oci::parse_index(*bytes);
    if (!index) return std::unexpected(index.error());
    view.annotations = index->annotations;
    for (const auto& d : index->manifests) {
      if (!oci::media_type::is_manifest(d.media_type)) continue;  // nested indexes, artifacts
      auto variant = load_variant(d, read);
      if (!variant) return std::unexpected(variant.error());
      view.variants.push_back(std::move(*variant));
    }
    return view;
  }
  auto variant = load_variant(root, read);
  if (!variant) return std::unexpected(variant.error());
  auto bytes = read(root);
  if (auto manifest = bytes ? oci::parse_manifest(*bytes) : std::unexpected(bytes.error())) {
    view.annotations = manifest->annotations;
  }
  view.variants.push_back(std::move(*variant));
  return view;
}

std::string render(const ImageView& view, Format format) {
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
      const auto id = v.manifest.annotation("org.hwimg.variant");
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
                        v.manifest.annotation("org.hwimg.variant").value_or("-"),
                        v.manifest.platform ? v.manifest.platform->str() : "-", v.manifest.digest.short_hex(),
                        v.layers.size(), human_size(total));
    for (const auto& [key, value] : v.manifest.annotations) {
      if (key != "org.hwimg.variant") text += fmt::format("    {} = {}\n", key, value);
    }
    for (const auto& layer : v.layers) {
      text += fmt::format("    layer sha256:{} {:>11}  {}\n", layer.digest.short_hex(), human_size(layer.size),
                          layer.media_type);
    }
  }
  return text;
}

Result<int> run_inspect(const std::string& reference, Format format) {
  const auto context = fmt::format("failed to inspect {}", reference);
  if (!oci::is_layout_reference(reference)) {
    return fail("{}: expected oci:DIR[:TAG]", context);
  }
  auto parsed = oci::parse_layout_reference(reference);
  if (!parsed) return std::unexpected(parsed.error().context(context));
  auto layout = oci::Layout::open(parsed->directory);
  if (!layout) return std::unexpected(layout.error().context(context));
  auto root = layout->resolve(parsed->tag);
  if (!root) return std::unexpected(root.error().context(context));
  auto view = load_image_view(reference, *root, [&](const oci::Descriptor& d) { return layout->read_blob(d); });
  if (!view) return std::unexpected(view.error().context(context));
  fmt::print("{}", render(*view, format));
  return 0;
}

}  // namespace hwimg::inspect
