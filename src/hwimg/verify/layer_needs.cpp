#include "hwimg/verify/layer_needs.hpp"

#include <algorithm>

#include "hwimg/image/layer_files.hpp"
#include "hwimg/verify/needs_cache.hpp"

namespace hwimg::verify {

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
  auto read = image::read_layer_files(blob, digest.str(), wanted, visit);
  auto needs = collector.finish();
  if (!read) return std::unexpected(std::move(read.error()));
  if (cache != nullptr) cache->store(digest, needs);
  return needs;
}

}  // namespace hwimg::verify
