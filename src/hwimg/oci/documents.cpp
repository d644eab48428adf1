#include "hwimg/oci/documents.hpp"

#include "hwimg/util/json_reader.hpp"

namespace hwimg::oci {
namespace {

using json = util::json::Json;
using util::json::Kind;

// Reads typed fields out of a JSON object, remembering the first type error with its path.
class Reader {
public:
  Reader(const json& object, std::string path) : m_object(object), m_path(std::move(path)) {}

  [[nodiscard]] std::string string(std::string_view key, bool required = false) {
    const auto* value = find(key, Kind::string, required);
    return value != nullptr ? util::json::as_string(*value).value_or("") : std::string();
  }
  [[nodiscard]] std::int64_t integer(std::string_view key, bool required = false) {
    const auto* value = find(key, Kind::non_negative_integer, required);
    return value != nullptr ? util::json::as_integer(*value).value_or(0) : 0;
  }
  [[nodiscard]] const json* object(std::string_view key, bool required = false) {
    return find(key, Kind::object, required);
  }
  // false when absent or null; another type is an error, not an exception.
  [[nodiscard]] bool boolean(std::string_view key) {
    const auto it = m_object.find(key);
    if (it == m_object.end() || it->is_null()) return false;
    const auto value = util::json::as_boolean(*it);
    if (!value) note_error(fmt::format("{}.{}: expected true or false", m_path, key));
    return value.value_or(false);
  }
  [[nodiscard]] const json* array(std::string_view key, bool required = false) {
    return find(key, Kind::array, required);
  }
  [[nodiscard]] std::optional<std::vector<std::string>> strings(std::string_view key) {
    const auto* value = array(key);
    if (value == nullptr) {
      return std::nullopt;
    }
    std::vector<std::string> out;
    for (const auto& item : *value) {
      auto text = util::json::as_string(item);
      if (!text) {
        note_error(fmt::format("{}.{}: expected an array of strings", m_path, key));
        return std::nullopt;
      }
      out.push_back(std::move(*text));
    }
    return out;
  }
  [[nodiscard]] Annotations string_map(std::string_view key) {
    Annotations out;
    const auto* value = object(key);
    if (value == nullptr) {
      return out;
    }
    for (const auto& [name, item] : value->items()) {
      auto text = util::json::as_string(item);
      if (!text) {
        note_error(fmt::format("{}.{}.{}: expected a string", m_path, key, name));
        continue;
      }
      out.emplace(name, std::move(*text));
    }
    return out;
  }
  [[nodiscard]] std::vector<std::string> object_keys(std::string_view key) {
    std::vector<std::string> out;
    if (const auto* value = object(key)) {
      for (const auto& [name, item] : value->items()) {
        out.push_back(name);
      }
    }
    return out;
  }

  [[nodiscard]] std::string child_path(std::string_view key) const { return m_path + "." + std::string(key); }
  void note_error(std::string message) {
    if (!m_error) {
      m_error = std::move(message);
    }
  }
  void merge(const Reader& child) {
    if (child.m_error) {
      note_error(*child.m_error);
    }
  }
  [[nodiscard]] const std::optional<std::string>& error() const { return m_error; }

private:
  const json* find(std::string_view key, Kind kind, bool required) {
    const auto value = util::json::member(m_object, key, kind);
    if (!value) {
      note_error(fmt::format("{}.{}: {}, got {}", m_path, key, value.error().message, m_object.at(key).type_name()));
      return nullptr;
    }
    if (*value == nullptr && required) {
      note_error(fmt::format("{}.{}: missing", m_path, key));
    }
    return *value;
  }

  const json& m_object;
  std::string m_path;
  std::optional<std::string> m_error;
};

json descriptor_json(const Descriptor& d) {
  json out = {{"mediaType", d.media_type}, {"digest", d.digest.str()}, {"size", d.size}};
  if (d.platform) {
    json platform = {{"os", d.platform->os}, {"architecture", d.platform->architecture}};
    if (!d.platform->variant.empty()) {
      platform["variant"] = d.platform->variant;
    }
    out["platform"] = platform;
  }
  if (!d.annotations.empty()) {
    out["annotations"] = d.annotations;
  }
  if (!d.artifact_type.empty()) {
    out["artifactType"] = d.artifact_type;
  }
  return out;
}

Descriptor read_descriptor(const json& value, const std::string& path, Reader& parent) {
  Descriptor d;
  if (!value.is_object()) {
    parent.note_error(fmt::format("{}: expected an object", path));
    return d;
  }
  Reader r(value, path);
  d.media_type = r.string("mediaType", true);
  if (const auto digest_text = r.string("digest", true); !digest_text.empty()) {
    if (auto digest = Digest::parse(digest_text)) {
      d.digest = *digest;
    } else {
      r.note_error(fmt::format("{}.digest: {}", path, digest.error().message));
    }
  }
  d.size = r.integer("size", true);
  if (const auto* platform = r.object("platform")) {
    Reader p(*platform, r.child_path("platform"));
    d.platform = Platform{p.string("os", true), p.string("architecture", true), p.string("variant")};
    r.merge(p);
  }
  d.annotations = r.string_map("annotations");
  d.artifact_type = r.string("artifactType");
  parent.merge(r);
  return d;
}

Result<json> parse_object(std::string_view text, std::string_view what) {
  auto value = json::parse(text, nullptr, false);
  if (value.is_discarded()) {
    return fail("failed to parse {}: invalid JSON", what);
  }
  if (!value.is_object()) {
    return fail("failed to parse {}: expected a JSON object", what);
  }
  return value;
}

template <typename T>
Result<T> finish(T value, const Reader& reader, std::string_view what) {
  if (reader.error()) {
    return fail("failed to parse {}: {}", what, *reader.error());
  }
  return value;
}

}  // namespace

std::optional<std::string> ImageConfig::env_value(std::string_view name) const {
  const auto prefix = std::string(name) + "=";
  for (const auto& entry : env) {
    if (entry.starts_with(prefix)) {
      return entry.substr(prefix.size());
    }
  }
  return std::nullopt;
}

void ImageConfig::set_env(std::string_view name, std::string_view value) {
  const auto entry = fmt::format("{}={}", name, value);
  const auto prefix = std::string(name) + "=";
  for (auto& existing : env) {
    if (existing.starts_with(prefix)) {
      existing = entry;
      return;
    }
  }
  env.push_back(entry);
}

std::string to_json(const Index& index) {
  json manifests = json::array();
  for (const auto& d : index.manifests) {
    manifests.push_back(descriptor_json(d));
  }
  json out = {{"schemaVersion", 2}, {"mediaType", index.media_type}, {"manifests", manifests}};
  if (!index.annotations.empty()) {
    out["annotations"] = index.annotations;
  }
  return out.dump();
}

std::string to_json(const Manifest& manifest) {
  json layers = json::array();
  for (const auto& d : manifest.layers) {
    layers.push_back(descriptor_json(d));
  }
  json out = {{"schemaVersion", 2},
              {"mediaType", manifest.media_type},
              {"config", descriptor_json(manifest.config)},
              {"layers", layers}};
  if (!manifest.artifact_type.empty()) {
    out["artifactType"] = manifest.artifact_type;
  }
  if (manifest.subject) {
    out["subject"] = descriptor_json(*manifest.subject);
  }
  if (!manifest.annotations.empty()) {
    out["annotations"] = manifest.annotations;
  }
  return out.dump();
}

std::string to_json(const ImageConfig& c) {
  json config = json::object();
  if (!c.user.empty()) config["User"] = c.user;
  if (!c.env.empty()) config["Env"] = c.env;
  if (c.entrypoint) config["Entrypoint"] = *c.entrypoint;
  if (c.cmd) config["Cmd"] = *c.cmd;
  if (!c.working_dir.empty()) config["WorkingDir"] = c.working_dir;
  if (!c.stop_signal.empty()) config["StopSignal"] = c.stop_signal;
  if (!c.labels.empty()) config["Labels"] = c.labels;
  for (const auto& port : c.exposed_ports) config["ExposedPorts"][port] = json::object();
  for (const auto& volume : c.volumes) config["Volumes"][volume] = json::object();

  json diff_ids = json::array();
  for (const auto& d : c.diff_ids) diff_ids.push_back(d.str());
  json out = {{"architecture", c.architecture},
              {"os", c.os},
              {"config", config},
              {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}};
  if (!c.variant.empty()) out["variant"] = c.variant;
  if (!c.created.empty()) out["created"] = c.created;
  if (!c.history.empty()) {
    json history = json::array();
    for (const auto& h : c.history) {
      json entry = json::object();
      if (!h.created.empty()) entry["created"] = h.created;
      if (!h.created_by.empty()) entry["created_by"] = h.created_by;
      if (!h.comment.empty()) entry["comment"] = h.comment;
      if (h.empty_layer) entry["empty_layer"] = true;
      history.push_back(entry);
    }
    out["history"] = history;
  }
  return out.dump();
}

Result<Index> parse_index(std::string_view text) {
  HWIMG_TRY_ASSIGN(const auto value, parse_object(text, "image index"));
  Reader r(value, "index");
  Index index;
  index.media_type = r.string("mediaType");
  if (!index.media_type.empty() && !media_type::is_index(index.media_type)) {
    r.note_error(fmt::format("index.mediaType: \"{}\" is not an image index type", index.media_type));
  }
  if (const auto* manifests = r.array("manifests", true)) {
    for (std::size_t i = 0; i < manifests->size(); ++i) {
      index.manifests.push_back(read_descriptor((*manifests)[i], fmt::format("index.manifests[{}]", i), r));
    }
  }
  index.annotations = r.string_map("annotations");
  return finish(std::move(index), r, "image index");
}

Result<Manifest> parse_manifest(std::string_view text) {
  HWIMG_TRY_ASSIGN(const auto value, parse_object(text, "image manifest"));
  Reader r(value, "manifest");
  Manifest manifest;
  manifest.media_type = r.string("mediaType");
  if (!manifest.media_type.empty() && !media_type::is_manifest(manifest.media_type)) {
    r.note_error(fmt::format("manifest.mediaType: \"{}\" is not an image manifest type", manifest.media_type));
  }
  if (const auto* config = r.object("config", true)) {
    manifest.config = read_descriptor(*config, "manifest.config", r);
  }
  if (const auto* layers = r.array("layers")) {
    for (std::size_t i = 0; i < layers->size(); ++i) {
      manifest.layers.push_back(read_descriptor((*layers)[i], fmt::format("manifest.layers[{}]", i), r));
    }
  }
  manifest.artifact_type = r.string("artifactType");
  if (const auto* subject = r.object("subject")) {
    manifest.subject = read_descriptor(*subject, "manifest.subject", r);
  }
  manifest.annotations = r.string_map("annotations");
  return finish(std::move(manifest), r, "image manifest");
}

Result<ImageConfig> parse_image_config(std::string_view text) {
  HWIMG_TRY_ASSIGN(const auto value, parse_object(text, "image config"));
  Reader r(value, "config");
  ImageConfig c;
  c.architecture = r.string("architecture", true);
  c.os = r.string("os", true);
  c.variant = r.string("variant");
  c.created = r.string("created");
  if (const auto* config = r.object("config")) {
    Reader inner(*config, "config.config");
    c.user = inner.string("User");
    c.env = inner.strings("Env").value_or(std::vector<std::string>{});
    c.entrypoint = inner.strings("Entrypoint");
    c.cmd = inner.strings("Cmd");
    c.working_dir = inner.string("WorkingDir");
    c.stop_signal = inner.string("StopSignal");
    c.labels = inner.string_map("Labels");
    c.exposed_ports = inner.object_keys("ExposedPorts");
    c.volumes = inner.object_keys("Volumes");
    r.merge(inner);
  }
  if (const auto* rootfs = r.object("rootfs", true)) {
    Reader inner(*rootfs, "config.rootfs");
    if (const auto type = inner.string("type", true); !type.empty() && type != "layers") {
      inner.note_error(fmt::format("config.rootfs.type: expected \"layers\", got \"{}\"", type));
    }
    for (const auto& text_id : inner.strings("diff_ids").value_or(std::vector<std::string>{})) {
      if (auto d = Digest::parse(text_id)) {
        c.diff_ids.push_back(*d);
      } else {
        inner.note_error("config.rootfs.diff_ids: " + d.error().message);
      }
    }
    r.merge(inner);
  }
  if (const auto* history = r.array("history")) {
    for (const auto& item : *history) {
      if (!item.is_object()) continue;
      Reader h(item, "config.history[]");
      c.history.push_back({h.string("created"), h.string("created_by"), h.string("comment"), h.boolean("empty_layer")});
      r.merge(h);
    }
  }
  return finish(std::move(c), r, "image config");
}

Result<std::string> sniff_media_type(std::string_view text) {
  HWIMG_TRY_ASSIGN(const auto value, parse_object(text, "manifest"));
  Reader r(value, "manifest");
  auto type = r.string("mediaType");
  if (type.empty() && value.contains("manifests")) {
    type = std::string(media_type::index);
  } else if (type.empty() && value.contains("config")) {
    type = std::string(media_type::manifest);
  }
  return finish(std::move(type), r, "manifest");
}

}  // namespace hwimg::oci
