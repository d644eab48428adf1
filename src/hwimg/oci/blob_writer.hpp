#pragma once
// Streams a layer into the layout: the uncompressed bytes are hashed (DiffID) and compressed, and the
// compressed bytes hashed (digest) and written, all in one pass.

#include <cstdint>
#include <memory>
#include <string_view>

#include "hwimg/oci/layout.hpp"

namespace hwimg::oci {

enum class Compression { none, gzip, zstd };

[[nodiscard]] Result<Compression> parse_compression(std::string_view name);
[[nodiscard]] std::string_view compression_name(Compression compression);
[[nodiscard]] std::string_view layer_media_type(Compression compression);

struct CompressionOptions {
  Compression compression = Compression::gzip;
  int level = 0;             // 0: the default of the algorithm (gzip 6, zstd 3)
  unsigned threads = 0;      // 0: every core this process may use
  // gzip only: each block of this many uncompressed bytes is one independent gzip member, so blocks
  // compress in parallel and the output depends only on level and block size, not on thread count.
  std::size_t gzip_block_size = 1 << 20;
  // zstd: frames of this many uncompressed bytes, for the same reason; larger, as zstd's window is.
  std::size_t zstd_block_size = 4 << 20;
};

struct WrittenLayer {
  Descriptor descriptor;  // the compressed blob, stored in the layout
  Digest diff_id;         // SHA-256 of the uncompressed tar
  std::int64_t uncompressed_size = 0;
};

class LayerBlobWriter {
public:
  [[nodiscard]] static Result<LayerBlobWriter> create(const Layout& layout, const CompressionOptions& options);
  LayerBlobWriter(LayerBlobWriter&&) noexcept;
  LayerBlobWriter& operator=(LayerBlobWriter&&) noexcept;
  LayerBlobWriter(const LayerBlobWriter&) = delete;
  LayerBlobWriter& operator=(const LayerBlobWriter&) = delete;
  ~LayerBlobWriter();

  [[nodiscard]] Result<void> write(std::string_view uncompressed);
  // Flushes, syncs and moves the blob into the layout. The writer is spent afterwards.
  [[nodiscard]] Result<WrittenLayer> finish();

private:
  struct State;
  explicit LayerBlobWriter(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

}  // namespace hwimg::oci
