#include "hwimg/verify/needs_cache.hpp"


#include "hwimg/util/files.hpp"
#include "hwimg/util/json_reader.hpp"

namespace hwimg::verify {
namespace fs = std::filesystem;
using util::json::Json;

namespace {

// Raised whenever the scans report something else for the same bytes (a new kind of dispatch, a
// feature table row), so that needs kept by an older hwimg are scanned again.
constexpr std::int64_t scanner_version = 5;  // 5: overlayfs xattrs
constexpr std::size_t largest_needs_file = std::size_t{64} << 20;

Json function_json(const FunctionNeeds& function) {
  Json uses = Json::array();
  for (const auto& use : function.uses) uses.push_back(Json::array({use.feature, use.mnemonic, use.address}));
  return {{"name", function.name},
          {"dispatch", hw::dispatch_key(function.dispatch)},
          {"by", function.dispatched_by},
          {"uses", std::move(uses)}};
}

std::optional<std::uint64_t> unsigned_of(const Json& value) {
  const auto number = util::json::as_integer(value);
  if (!number || *number < 0) return std::nullopt;
  return static_cast<std::uint64_t>(*number);
}

std::optional<FunctionNeeds> function_from(const Json& object) {
  if (!object.is_object() || !object.contains("name") || !object.contains("dispatch") || !object.contains("by") ||
      !object.contains("uses")) {
    return std::nullopt;
  }
  auto name = util::json::as_string(object["name"]);
  auto by = util::json::as_string(object["by"]);
  const auto key = util::json::as_string(object["dispatch"]);
  const auto dispatch = key ? hw::parse_dispatch_key(*key) : std::nullopt;
  const auto& uses = object["uses"];
  if (!name || !dispatch || !by || !uses.is_array()) return std::nullopt;
  FunctionNeeds function{std::move(*name), *dispatch, std::move(*by), {}};
  for (const auto& use : uses) {
    if (!use.is_array() || use.size() != 3) return std::nullopt;
    auto feature = util::json::as_string(use[0]);
    auto mnemonic = util::json::as_string(use[1]);
    const auto address = unsigned_of(use[2]);
    if (!feature || !mnemonic || !address) return std::nullopt;
    function.uses.push_back({std::move(*feature), std::move(*mnemonic), *address});
  }
  return function;
}

std::optional<FileNeeds> file_from(const Json& object) {
  if (!object.is_object()) return std::nullopt;
  for (const auto* key : {"path", "class", "type", "machine", "error", "code_bytes", "functions"}) {
    if (!object.contains(key)) return std::nullopt;
  }
  auto path = util::json::as_string(object["path"]);
  const auto elf_class = unsigned_of(object["class"]);
  const auto type = unsigned_of(object["type"]);
  const auto machine = unsigned_of(object["machine"]);
  auto error = util::json::as_string(object["error"]);
  const auto code_bytes = unsigned_of(object["code_bytes"]);
  if (!code_bytes || !path || !elf_class || *elf_class > 2 || !type || *type > 0xffff || !machine || *machine > 0xffff || !error ||
      !object["functions"].is_array()) {
    return std::nullopt;
  }
  FileNeeds file{std::move(*path),
                 {static_cast<hw::ElfClass>(*elf_class), static_cast<std::uint16_t>(*type),
                  static_cast<std::uint16_t>(*machine)},
                 std::nullopt,
                 {},
                 std::move(*error),
                 *code_bytes};
  if (object.contains("needed_level")) {
    const auto level = unsigned_of(object["needed_level"]);
    if (!level || *level < 1 || *level > 4) return std::nullopt;
    file.needed_level = static_cast<hw::X86Level>(*level);
  }
  for (const auto& item : object["functions"]) {
    auto function = function_from(item);
    if (!function) return std::nullopt;
    file.functions.push_back(std::move(*function));
  }
  return file;
}

}  // namespace

std::string needs_to_json(const LayerNeeds& needs) {
  Json files = Json::array();
  for (const auto& file : needs.files) {
    Json functions = Json::array();
    for (const auto& function : file.functions) functions.push_back(function_json(function));
    Json object{{"path", file.path},
                {"class", static_cast<int>(file.identity.elf_class)},
                {"type", file.identity.type},
                {"machine", file.identity.machine},
                {"error", file.scan_error},
                {"code_bytes", file.code_bytes},
                {"functions", std::move(functions)}};
    if (file.needed_level) object["needed_level"] = hw::x86_level_number(*file.needed_level);
    files.push_back(std::move(object));
  }
  const Json document{{"scanner", scanner_version},
                      {"files", std::move(files)},
                      {"overlay_xattrs", needs.overlay_xattrs},
                      {"overlay_xattr_entries", needs.overlay_xattr_entries}};
  return document.dump();
}

std::optional<LayerNeeds> needs_from_json(std::string_view text) {
  const auto document = util::json::parse_object(text);
  if (!document || !document->contains("scanner") || !document->contains("files") ||
      !document->contains("overlay_xattrs") || !document->contains("overlay_xattr_entries")) {
    return std::nullopt;
  }
  const auto version = util::json::as_integer((*document)["scanner"]);
  const auto& files = (*document)["files"];
  const auto& overlay_xattrs = (*document)["overlay_xattrs"];
  const auto overlay_xattr_entries = unsigned_of((*document)["overlay_xattr_entries"]);
  if (version != scanner_version || !files.is_array() || !overlay_xattrs.is_array() || !overlay_xattr_entries) {
    return std::nullopt;
  }
  LayerNeeds needs;
  for (const auto& item : overlay_xattrs) {
    auto line = util::json::as_string(item);
    if (!line) return std::nullopt;
    needs.overlay_xattrs.push_back(std::move(*line));
  }
  needs.overlay_xattr_entries = *overlay_xattr_entries;
  for (const auto& item : files) {
    auto file = file_from(item);
    if (!file) return std::nullopt;
    needs.files.push_back(std::move(*file));
  }
  return needs;
}

fs::path NeedsCache::path(const oci::Digest& layer) const {
  return m_root / "code-needs" / "sha256" / (layer.hex() + ".json");
}

std::optional<LayerNeeds> NeedsCache::load(const oci::Digest& layer) const {
  const auto text = util::read_regular_file(path(layer), largest_needs_file);
  if (!text) return std::nullopt;
  return needs_from_json(*text);
}

void NeedsCache::store(const oci::Digest& layer, const LayerNeeds& needs) const {
  const auto file = path(layer);
  if (util::make_directories(file.parent_path())) (void)util::write_file_atomic(file, needs_to_json(needs), 0600);
}

}  // namespace hwimg::verify
