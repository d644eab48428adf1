#include "hwimg/oci/blob_writer.hpp"

#include <cerrno>
#include <deque>
#include <functional>
#include <future>

#include <fcntl.h>
#include <libdeflate.h>
#include <unistd.h>
#include <zstd.h>

#include "hwimg/oci/media_types.hpp"
#include "hwimg/util/files.hpp"
#include "hwimg/util/thread_pool.hpp"

namespace hwimg::oci {
namespace {

// Receives compressed bytes: hashes, counts and appends them to the temporary blob file.
class Output {
public:
  Output(util::UniqueFd fd, std::filesystem::path path) : m_fd(std::move(fd)), m_path(std::move(path)) {}

  Result<void> write(const void* data, std::size_t size) {
    m_hash.update(data, size);
    m_size += static_cast<std::int64_t>(size);
    const auto* bytes = static_cast<const char*>(data);
    while (size > 0) {
      const auto n = ::write(m_fd.get(), bytes, size);
      if (n < 0) {
        if (errno == EINTR) continue;
        return fail("failed to write layer blob {}: {}", m_path.string(), util::errno_text(errno));
      }
      bytes += n;
      size -= static_cast<std::size_t>(n);
    }
    return {};
  }

  Result<Digest> close() {
    if (::fsync(m_fd.get()) != 0) {
      return fail("failed to sync layer blob {}: {}", m_path.string(), util::errno_text(errno));
    }
    m_fd.reset();
    return m_hash.finish();
  }

  [[nodiscard]] std::int64_t size() const { return m_size; }
  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

private:
  util::UniqueFd m_fd;
  std::filesystem::path m_path;
  Sha256 m_hash;
  std::int64_t m_size = 0;
};

class Compressor {
public:
  virtual ~Compressor() = default;
  virtual Result<void> write(std::string_view data, Output& out) = 0;
  virtual Result<void> finish(Output& out) = 0;
};

class PassThrough final : public Compressor {
public:
  Result<void> write(std::string_view data, Output& out) override { return out.write(data.data(), data.size()); }
  Result<void> finish(Output&) override { return {}; }
};

// Compresses one block into one self-contained member (a gzip member, a zstd frame).
using BlockCodec = std::function<Result<std::string>(const std::string& block, int level)>;

Result<std::string> gzip_member(const std::string& block, int level) {
  thread_local std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> compressor{
      nullptr, libdeflate_free_compressor};
  thread_local int compressor_level = -1;
  if (!compressor || compressor_level != level) {
    compressor.reset(libdeflate_alloc_compressor(level));
    compressor_level = level;
    if (!compressor) {
      return fail("failed to compress layer: cannot allocate a gzip level {} compressor", level);
    }
  }
  std::string compressed(libdeflate_gzip_compress_bound(compressor.get(), block.size()), '\0');
  const auto size =
      libdeflate_gzip_compress(compressor.get(), block.data(), block.size(), compressed.data(), compressed.size());
  if (size == 0) {
    return fail("failed to compress layer: gzip output exceeded its bound");
  }
  compressed.resize(size);
  return compressed;
}

Result<std::string> zstd_frame(const std::string& block, int level) {
  thread_local std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> ctx{ZSTD_createCCtx(), ZSTD_freeCCtx};
  if (!ctx) return fail("failed to compress layer: cannot allocate a zstd context");
  std::string compressed(ZSTD_compressBound(block.size()), '\0');
  const auto size = ZSTD_compressCCtx(ctx.get(), compressed.data(), compressed.size(), block.data(), block.size(), level);
  if (ZSTD_isError(size)) {
    return fail("failed to compress layer: {}", ZSTD_getErrorName(size));
  }
  compressed.resize(size);
  return compressed;
}

// Block-parallel compression: independent members (gzip) or frames (zstd) compressed on a thread
// pool and written in order. Readers take the concatenation as one stream (RFC 1952, RFC 8878);
// the output depends only on codec, level and block size, not on the thread count.
class ParallelBlocks final : public Compressor {
public:
  ParallelBlocks(BlockCodec codec, int level, unsigned threads, std::size_t block_size)
      : m_codec(std::move(codec)), m_level(level), m_block_size(block_size), m_pool(threads),
        m_max_in_flight(2 * m_pool.size() + 1) {
    m_block.reserve(m_block_size);
  }

  Result<void> write(std::string_view data, Output& out) override {
    while (!data.empty()) {
      const auto take = std::min(data.size(), m_block_size - m_block.size());
      m_block.append(data.substr(0, take));
      data.remove_prefix(take);
      if (m_block.size() == m_block_size) {
        HWIMG_TRY(submit(out));
      }
    }
    return {};
  }

  Result<void> finish(Output& out) override {
    if (!m_block.empty()) {
      HWIMG_TRY(submit(out));
    }
    while (!m_in_flight.empty()) {
      HWIMG_TRY(drain_one(out));
    }
    return {};
  }

private:
  Result<void> submit(Output& out) {
    m_in_flight.push_back(m_pool.submit(
        [block = std::move(m_block), level = m_level, codec = m_codec]() { return codec(block, level); }));
    m_block = std::string();
    m_block.reserve(m_block_size);
    while (m_in_flight.size() > m_max_in_flight) {
      HWIMG_TRY(drain_one(out));
    }
    return {};
  }

  Result<void> drain_one(Output& out) {
    auto compressed = m_in_flight.front().get();
    m_in_flight.pop_front();
    if (!compressed) return std::unexpected(compressed.error());
    return out.write(compressed->data(), compressed->size());
  }

  BlockCodec m_codec;
  int m_level;
  std::size_t m_block_size;
  util::ThreadPool m_pool;
  std::size_t m_max_in_flight;
  std::string m_block;
  std::deque<std::future<Result<std::string>>> m_in_flight;
};

}  // namespace

Result<Compression> parse_compression(std::string_view name) {
  if (name == "gzip") return Compression::gzip;
  if (name == "zstd") return Compression::zstd;
  if (name == "none") return Compression::none;
  return fail_usage("invalid compression \"{}\": expected gzip, zstd or none", name);
}

std::string_view compression_name(Compression compression) {
  switch (compression) {
    case Compression::gzip: return "gzip";
    case Compression::zstd: return "zstd";
    case Compression::none: return "none";
  }
  return "none";
}

std::string_view layer_media_type(Compression compression) {
  switch (compression) {
    case Compression::gzip: return media_type::layer_gzip;
    case Compression::zstd: return media_type::layer_zstd;
    case Compression::none: return media_type::layer_tar;
  }
  return media_type::layer_tar;
}

struct LayerBlobWriter::State {
  Layout layout;
  Compression compression;
  Output output;
  std::unique_ptr<Compressor> compressor;
  Sha256 diff_id;
  std::int64_t uncompressed_size = 0;
};

LayerBlobWriter::LayerBlobWriter(std::unique_ptr<State> state) : m_state(std::move(state)) {}
LayerBlobWriter::LayerBlobWriter(LayerBlobWriter&&) noexcept = default;
LayerBlobWriter& LayerBlobWriter::operator=(LayerBlobWriter&&) noexcept = default;

LayerBlobWriter::~LayerBlobWriter() {
  if (m_state) {
    ::unlink(m_state->output.path().c_str());
  }
}

Result<LayerBlobWriter> LayerBlobWriter::create(const Layout& layout, const CompressionOptions& options) {
  const unsigned threads = options.threads != 0 ? options.threads : util::default_parallelism();
  std::unique_ptr<Compressor> compressor;
  switch (options.compression) {
    case Compression::none:
      compressor = std::make_unique<PassThrough>();
      break;
    case Compression::gzip:
      if (options.level < 0 || options.level > 12) {
        return fail("invalid gzip level {}: expected 1 to 12", options.level);
      }
      compressor = std::make_unique<ParallelBlocks>(gzip_member, options.level != 0 ? options.level : 6, threads,
                                                    options.gzip_block_size);
      break;
    case Compression::zstd:
      compressor = std::make_unique<ParallelBlocks>(zstd_frame, options.level != 0 ? options.level : 3, threads,
                                                    options.zstd_block_size);
      break;
  }
  const auto path = layout.temporary_file("layer");
  util::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return fail("failed to create {}: {}", path.string(), util::errno_text(errno));
  }
  return LayerBlobWriter(std::unique_ptr<State>(
      new State{layout, options.compression, Output(std::move(fd), path), std::move(compressor), Sha256(), 0}));
}

Result<void> LayerBlobWriter::write(std::string_view uncompressed) {
  m_state->diff_id.update(uncompressed);
  m_state->uncompressed_size += static_cast<std::int64_t>(uncompressed.size());
  return m_state->compressor->write(uncompressed, m_state->output);
}

Result<WrittenLayer> LayerBlobWriter::finish() {
  auto state = std::move(m_state);
  const auto temporary = state->output.path();
  auto finished = [&]() -> Result<WrittenLayer> {
    HWIMG_TRY(state->compressor->finish(state->output));
    HWIMG_TRY_ASSIGN(const auto digest, state->output.close());
    HWIMG_TRY(state->layout.adopt_blob(temporary, digest));
    return WrittenLayer{Descriptor{std::string(layer_media_type(state->compression)), digest,
                                   state->output.size(), {}, {}},
                        state->diff_id.finish(), state->uncompressed_size};
  }();
  if (!finished) {
    ::unlink(temporary.c_str());
  }
  return finished;
}

}  // namespace hwimg::oci
