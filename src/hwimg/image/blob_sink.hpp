#pragma once
// A blob written to a file as it arrives: its size and digest checked at the end, the file synced,
// and removed again when anything failed or the sink is dropped unfinished.

#include <filesystem>
#include <string_view>

#include "hwimg/oci/descriptor.hpp"
#include "hwimg/util/fd.hpp"

namespace hwimg::image {

class BlobSink {
public:
  // Creates `path`, which must not exist, for the blob `expected` describes.
  [[nodiscard]] static Result<BlobSink> create(const std::filesystem::path& path, const oci::Descriptor& expected);
  BlobSink(BlobSink&& other) noexcept;
  BlobSink& operator=(BlobSink&&) = delete;
  BlobSink(const BlobSink&) = delete;
  BlobSink& operator=(const BlobSink&) = delete;
  ~BlobSink();

  [[nodiscard]] Result<void> write(std::string_view data);
  // Checks size and digest ("blob X does not match its digest (content hashes to Y)") and syncs.
  [[nodiscard]] Result<void> finish();

private:
  BlobSink(std::filesystem::path path, util::UniqueFd fd, oci::Descriptor expected);
  std::filesystem::path m_path;
  util::UniqueFd m_fd;
  oci::Descriptor m_expected;
  oci::Sha256 m_hash;
  std::uint64_t m_size = 0;
  bool m_done = false;
};

}  // namespace hwimg::image
