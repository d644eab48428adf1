#pragma once
// Scans the programs of one layer on a thread pool: the caller hands over each file as it reads it
// (from a directory the build step wrote, or from a layer blob's tar), and the scans run while it
// reads on. At most `in_flight_limit` bytes of files wait or are scanned at once.

#include <cstddef>
#include <deque>
#include <filesystem>
#include <future>
#include <memory>
#include <string>

#include "hwimg/oci/digest.hpp"
#include "hwimg/util/error.hpp"
#include "hwimg/util/thread_pool.hpp"
#include "hwimg/verify/code_needs.hpp"

namespace hwimg::verify {

class NeedsCollector {
public:
  explicit NeedsCollector(util::ThreadPool& pool) : m_pool(pool) {}

  // `path` is the file's path in the image; files that are not programs are dropped at once.
  void add(std::string path, std::string bytes);
  // Every file's needs, by path.
  [[nodiscard]] LayerNeeds finish();

private:
  struct Pending {
    std::future<std::optional<FileNeeds>> needs;
    std::size_t bytes = 0;
  };
  void collect_oldest();

  static constexpr std::size_t in_flight_limit = std::size_t{512} << 20;
  util::ThreadPool& m_pool;
  std::deque<Pending> m_pending;
  std::size_t m_in_flight = 0;
  LayerNeeds m_needs;
};

// The needs of a layer blob (a tar, compressed or not), read from `cache` when it has them and kept
// there when it had not; `name` names the layer in errors.
class NeedsCache;
[[nodiscard]] Result<LayerNeeds> blob_needs(const std::filesystem::path& blob, const oci::Digest& digest,
                                            const NeedsCache* cache, util::ThreadPool& pool);

}  // namespace hwimg::verify
