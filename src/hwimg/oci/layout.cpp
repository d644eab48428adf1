#include "hwimg/oci/layout.hpp"

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <system_error>


#include <unistd.h>

#include "hwimg/util/files.hpp"
#include "hwimg/util/strings.hpp"

namespace hwimg::oci {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view layout_marker = R"({"imageLayoutVersion":"1.0.0"})";
// oci-layout is one small JSON object; index.json lists every tag, so it gets room for many
// thousands of them (a descriptor with its annotations is a few hundred bytes).
constexpr std::size_t max_marker_size = 4096;
constexpr std::size_t max_index_json_size = std::size_t{64} << 20;

}  // namespace

namespace {

// Builds a complete empty layout beside `root` and renames it into place, so a layout never exists
// half-made: a crash leaves either nothing or a layout that skopeo and umoci accept.
Result<void> create_layout(const fs::path& root) {
  std::error_code ec;
  if (fs::exists(root, ec) && !fs::is_empty(root, ec)) {
    return fail("failed to create image layout {}: the directory exists and is not an OCI image layout "
                "(no oci-layout file)",
                root.string());
  }
  const auto absolute = fs::absolute(root, ec).lexically_normal();
  const auto parent = absolute.has_filename() ? absolute.parent_path() : absolute.parent_path().parent_path();
  HWIMG_TRY(util::make_directories(parent));
  util::remove_orphaned_temporaries(parent, "." + absolute.filename().string() + ".tmp-", ".tmp-");
  const auto staging = util::temporary_sibling(absolute.has_filename() ? absolute : absolute.parent_path());
  HWIMG_TRY(util::make_directories(staging / "blobs" / "sha256"));
  const auto give_up = [&](const Error& error) -> Result<void> {
    fs::remove_all(staging, ec);
    return std::unexpected(error.context("failed to create image layout " + root.string()));
  };
  if (auto r = util::write_file_atomic(staging / "index.json", to_json(Index{})); !r) return give_up(r.error());
  if (auto r = util::write_file_atomic(staging / "oci-layout", layout_marker); !r) return give_up(r.error());
  if (::rename(staging.c_str(), root.c_str()) != 0) {
    const int error = errno;
    fs::remove_all(staging, ec);
    // Another writer created it first; theirs is as good as ours.
    if ((error == ENOTEMPTY || error == EEXIST) && fs::exists(root / "oci-layout", ec)) return {};
    return fail("failed to create image layout {}: {}", root.string(), util::errno_text(error));
  }
  return util::fsync_directory(parent);
}

}  // namespace

Result<Layout> Layout::open(const fs::path& root, OpenMode mode) {
  const auto marker_path = root / "oci-layout";
  std::error_code ec;
  if (!fs::exists(marker_path, ec)) {
    if (mode == OpenMode::existing) {
      return fail("failed to open image layout {}: no oci-layout file (not an OCI image layout)", root.string());
    }
    HWIMG_TRY(create_layout(root));
  }
  HWIMG_TRY_ASSIGN(const auto marker,
                   with_context(util::read_regular_file(marker_path, max_marker_size),
                                "failed to open image layout " + root.string()));
  if (marker.find("\"1.0.0\"") == std::string::npos) {
    return fail("failed to open image layout {}: unsupported oci-layout {}", root.string(), util::trim(marker));
  }
  if (!fs::exists(root / "index.json", ec)) {
    return fail("failed to open image layout {}: index.json is missing", root.string());
  }
  Layout layout(root);
  if (mode == OpenMode::create) {
    HWIMG_TRY(util::make_directories(root / "blobs" / "sha256"));
    for (const auto& directory : {root, layout.state_directory() / "tmp", layout.state_directory() / "cache"}) {
      util::remove_orphaned_temporaries(directory, ".", ".tmp-");
    }
  }
  return layout;
}

fs::path Layout::blob_path(const Digest& digest) const {
  return m_root / "blobs" / "sha256" / digest.hex();
}

bool Layout::has_blob(const Digest& digest) const {
  std::error_code ec;
  return fs::is_regular_file(blob_path(digest), ec);
}

fs::path Layout::temporary_file(std::string_view purpose) const {
  const auto directory = state_directory() / "tmp";
  std::error_code ec;
  fs::create_directories(directory, ec);
  return util::temporary_sibling(directory / purpose);
}

Result<Descriptor> Layout::put_blob(std::string_view data, std::string_view media_type) const {
  const auto digest = Digest::sha256_of(data);
  Descriptor descriptor{std::string(media_type), digest, static_cast<std::int64_t>(data.size()), {}, {}};
  if (has_blob(digest)) {
    return descriptor;
  }
  // Written in the private temporary area, so a crash never leaves a partial file under blobs/.
  const auto temporary = temporary_file("blob");
  HWIMG_TRY(with_context(util::write_file_durable(temporary, data), "failed to store blob " + digest.str()));
  HWIMG_TRY(adopt_blob(temporary, digest));
  return descriptor;
}

Result<void> Layout::adopt_blob(const fs::path& temporary, const Digest& digest) const {
  const auto target = blob_path(digest);
  if (has_blob(digest)) {
    ::unlink(temporary.c_str());
    return {};
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    return fail("failed to store blob {}: {}", digest.str(), util::errno_text(errno));
  }
  return util::fsync_directory(target.parent_path());
}

Result<std::string> Layout::read_blob(const Descriptor& descriptor) const {
  if (descriptor.size < 0 || static_cast<std::size_t>(descriptor.size) > document_limit(descriptor)) {
    return fail("failed to read blob {} from {}: its descriptor says {} bytes, more than the {} MiB limit",
                descriptor.digest.str(), m_root.string(), descriptor.size, document_limit(descriptor) >> 20);
  }
  // Never more than the descriptor says: a blob that is a FIFO or a link to /dev/zero is refused.
  auto data = util::read_regular_file(blob_path(descriptor.digest), static_cast<std::size_t>(descriptor.size));
  if (!data) {
    return fail("failed to read blob {} from {}: {}", descriptor.digest.str(), m_root.string(),
                data.error().message);
  }
  HWIMG_TRY(verify_content(descriptor, *data, m_root.string()));
  return data;
}

Result<Index> Layout::read_index_json() const {
  HWIMG_TRY_ASSIGN(const auto text, util::read_regular_file(m_root / "index.json", max_index_json_size));
  return with_context(parse_index(text), "failed to read " + (m_root / "index.json").string());
}

Result<void> Layout::update_index_json(const std::function<Result<void>(Index&)>& change) const {
  HWIMG_TRY(util::make_directories(state_directory()));
  HWIMG_TRY_ASSIGN(const auto lock, util::FileLock::acquire(state_directory() / "lock"));
  Index index;
  std::error_code ec;
  if (fs::exists(m_root / "index.json", ec)) {
    HWIMG_TRY_ASSIGN(index, read_index_json());
  }
  HWIMG_TRY(change(index));
  return util::write_file_atomic(m_root / "index.json", to_json(index));
}

Result<Descriptor> Layout::resolve(std::string_view tag) const {
  HWIMG_TRY_ASSIGN(const auto index, read_index_json());
  if (tag.empty()) {
    // Referrers listed beside the image (they carry an artifactType) are not images to pick.
    std::vector<Descriptor> images;
    std::ranges::copy_if(index.manifests, std::back_inserter(images),
                         [](const Descriptor& d) { return d.artifact_type.empty(); });
    if (images.size() == 1) {
      return images.front();
    }
    return fail("failed to resolve {}: it holds {} images, name one with oci:{}:TAG", m_root.string(),
                images.size(), m_root.string());
  }
  std::vector<std::string> tags;
  for (const auto& d : index.manifests) {
    if (const auto name = d.ref_name()) {
      if (*name == tag) {
        return d;
      }
      tags.push_back(*name);
    }
  }
  return fail("failed to resolve tag \"{}\" in {}: no such tag{}", tag, m_root.string(),
              util::did_you_mean(tag, tags));
}

bool is_layout_reference(std::string_view text) {
  return text.starts_with("oci:");
}

Result<LayoutReference> parse_layout_reference(std::string_view text) {
  if (!is_layout_reference(text)) {
    return fail("failed to parse layout reference \"{}\": expected oci:DIR[:TAG]", text);
  }
  auto rest = text.substr(4);
  LayoutReference ref;
  if (const auto at = rest.rfind("@sha256:"); at != std::string_view::npos) {
    auto digest = Digest::parse(rest.substr(at + 1));
    if (!digest) return fail("failed to parse layout reference \"{}\": {}", text, digest.error().message);
    ref.digest = *digest;
    rest = rest.substr(0, at);
  }
  const auto colon = ref.digest ? std::string_view::npos : rest.find(':');
  ref.directory = fs::path(std::string(rest.substr(0, colon)));
  if (colon != std::string_view::npos) {
    ref.tag = std::string(rest.substr(colon + 1));
  }
  if (ref.directory.empty()) {
    return fail("failed to parse layout reference \"{}\": empty directory", text);
  }
  if (!ref.tag.empty()) {
    HWIMG_TRY(validate_tag(ref.tag));
  }
  return ref;
}

Result<void> validate_tag(std::string_view tag) {
  const auto is_alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  const auto is_separator = [](char c) {
    return c == '-' || c == '.' || c == '_' || c == ':' || c == '@' || c == '+';
  };
  for (const auto& component : util::split(tag, '/')) {
    if (component.empty() || !is_alnum(component.front()) || !is_alnum(component.back())) {
      return fail("invalid tag \"{}\": each part must start and end with a letter or digit", tag);
    }
    for (std::size_t i = 0; i < component.size(); ++i) {
      const char c = component[i];
      if (is_alnum(c)) continue;
      if (!is_separator(c)) {
        return fail("invalid tag \"{}\": character '{}' is not allowed", tag, c);
      }
      const bool double_dash = c == '-' && component[i + 1] == '-' && is_alnum(component[i + 2]);
      if (double_dash) {
        ++i;
        continue;
      }
      if (!is_alnum(component[i + 1])) {
        return fail("invalid tag \"{}\": separators cannot repeat", tag);
      }
    }
  }
  return {};
}

}  // namespace hwimg::oci
