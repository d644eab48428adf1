#pragma once
// A tar file written entry by entry (libarchive, POSIX pax): directories, small files from memory
// and large ones streamed from disk, all owned by 0:0 with one fixed mtime, so the same entries
// give the same bytes. For image archives (oci-archive, docker-archive).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>

#include "hwimg/util/error.hpp"

namespace hwimg::oci {

class TarWriter {
public:
  // Creates `path`, which must not exist.
  [[nodiscard]] static Result<TarWriter> create(const std::filesystem::path& path, std::int64_t mtime);
  TarWriter(TarWriter&&) noexcept;
  TarWriter& operator=(TarWriter&&) noexcept;
  ~TarWriter();

  [[nodiscard]] Result<void> add_directory(std::string_view name);
  [[nodiscard]] Result<void> add_bytes(std::string_view name, std::string_view data);
  // The content of `source`, read in pieces; it must keep its size while being read.
  [[nodiscard]] Result<void> add_file(std::string_view name, const std::filesystem::path& source);
  // Writes the end of the archive and syncs the file to disk.
  [[nodiscard]] Result<void> finish();

private:
  struct Impl;
  explicit TarWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace hwimg::oci
