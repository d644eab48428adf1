#include "hwimg/verify/layer_needs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "hwimg/image/layer_files.hpp"
#include "hwimg/image/overlay_xattr_filter.hpp"
#include "hwimg/util/strings.hpp"
#include "hwimg/verify/needs_cache.hpp"

namespace hwimg::verify {
namespace {

// The entries with overlayfs xattrs, as "/opt (user.overlay.impure, user.overlay.origin)": an
// entry's xattrs come one after the other, a name twice where a pax header has both its
// SCHILY.xattr. and LIBARCHIVE.xattr. records (as libarchive writes them). Only the first few are
// kept, enough to say where they are (a hostile layer may have millions); all are counted. Paths
// and names are the layer's bytes, shown with their control characters escaped.
class OverlayXattrTally {
public:
  void add(std::string_view path, std::string_view name) {
    if (!image::is_overlay_xattr(name)) return;
    if (auto entry = "/" + std::string(path); entry != m_entry || m_names.empty()) {
      close_entry();
      m_entry = std::move(entry);
      ++m_entries;
    }
    if (std::ranges::find(m_names, name) == m_names.end()) m_names.emplace_back(name);
  }

  void finish(LayerNeeds& needs) {
    close_entry();
    needs.overlay_xattrs = std::move(m_kept);
    needs.overlay_xattr_entries = m_entries;
  }

private:
  void close_entry() {
    std::ranges::sort(m_names);
    if (!m_names.empty() && m_kept.size() < kept_entries) {
      for (auto& name : m_names) name = util::printable(name);
      m_kept.push_back(fmt::format("{} ({})", util::printable(m_entry), fmt::join(m_names, ", ")));
    }
    m_names.clear();
  }

  static constexpr std::size_t kept_entries = 8;
  std::string m_entry;
  std::vector<std::string> m_names;
  std::vector<std::string> m_kept;
  std::size_t m_entries = 0;
};

}  // namespace

void NeedsCollector::add(std::string path, std::string bytes) {
  const auto data = std::as_bytes(std::span(bytes.data(), bytes.size()));
  if (!may_be_program(data.first(std::min(data.size(), hw::elf_identity_size)))) return;
  while (!m_pending.empty() && m_in_flight + bytes.size() > in_flight_limit) collect_oldest();
  const auto size = bytes.size();
  auto task = [this, path = std::move(path), bytes = std::move(bytes)]() mutable {
    return file_needs(std::as_bytes(std::span(bytes.data(), bytes.size())), std::move(path), &m_pool);
  };
  m_pending.push_back({m_pool.submit(std::move(task)), size});
  m_in_flight += size;
}

void NeedsCollector::collect_oldest() {
  auto pending = std::move(m_pending.front());
  m_pending.pop_front();
  m_in_flight -= pending.bytes;
  if (auto needs = pending.needs.get()) m_needs.files.push_back(std::move(*needs));
}

LayerNeeds NeedsCollector::finish() {
  while (!m_pending.empty()) collect_oldest();
  std::ranges::sort(m_needs.files, {}, &FileNeeds::path);
  return std::move(m_needs);
}

Result<LayerNeeds> blob_needs(const std::filesystem::path& blob, const oci::Digest& digest, const NeedsCache* cache,
                              util::ThreadPool& pool) {
  if (cache != nullptr) {
    if (auto kept = cache->load(digest)) return std::move(*kept);
  }
  NeedsCollector collector(pool);
  const auto wanted = [](std::string_view, std::span<const std::byte> head) {
    return may_be_program(head.first(std::min(head.size(), hw::elf_identity_size)));
  };
  const auto visit = [&](std::string_view path, std::string_view bytes) -> Result<void> {
    collector.add("/" + std::string(path), std::string(bytes));
    return {};
  };
  OverlayXattrTally overlay;
  auto read = image::read_layer_files(blob, digest.str(), wanted, visit,
                                      [&](std::string_view path, std::string_view name) { overlay.add(path, name); });
  auto needs = collector.finish();
  overlay.finish(needs);
  if (!read) return std::unexpected(std::move(read.error()));
  if (cache != nullptr) cache->store(digest, needs);
  return needs;
}

}  // namespace hwimg::verify
