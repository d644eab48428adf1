// OCI index, manifest and image config documents as registries and layouts serve them, and the
// image walk over them (index -> manifests -> configs). Input: documents separated by NUL bytes,
// the first the root; the others are stored by digest for the walk to find.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hwimg/image/documents.hpp"
#include "hwimg/image/memory_reader.hpp"
#include "hwimg/oci/documents.hpp"

namespace {

// Documents hwimg reads must write back as documents it reads.
template <typename Parse>
void check_round_trip(std::string_view text, Parse parse) {
  if (const auto document = parse(text)) {
    if (!parse(hwimg::oci::to_json(*document))) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hwimg;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> documents;
  for (auto end = text.find('\0'); ; end = text.find('\0')) {
    documents.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  for (const auto document : documents) {
    (void)oci::sniff_media_type(document);
    check_round_trip(document, [](std::string_view json) { return oci::parse_index(json); });
    check_round_trip(document, [](std::string_view json) { return oci::parse_manifest(json); });
    check_round_trip(document, [](std::string_view json) { return oci::parse_image_config(json); });
  }
  image::MemoryReader reader("fuzz");
  const auto root_type = oci::sniff_media_type(documents.front()).value_or("");
  const auto root = reader.add(std::string(documents.front()),
                               root_type.empty() ? "application/vnd.oci.image.index.v1+json" : root_type);
  for (std::size_t i = 1; i < documents.size(); ++i) {
    const auto type = oci::sniff_media_type(documents[i]).value_or("");
    (void)reader.add(std::string(documents[i]), type.empty() ? "application/vnd.oci.image.config.v1+json" : type);
  }
  if (const auto images = image::list_images(reader, root)) {
    for (const auto& descriptor : *images) {
      if (const auto manifest = image::read_manifest(reader, descriptor)) (void)image::read_config(reader, *manifest);
    }
  }
  return 0;
}
