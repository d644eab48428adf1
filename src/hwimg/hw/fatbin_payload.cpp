#include "hwimg/hw/fatbin_payload.hpp"

#include <optional>

#include <zstd.h>

namespace hwimg::hw {

namespace {

// Far above any real cubin or PTX text; refuses absurd sizes in a corrupt header before allocating.
constexpr std::uint64_t max_uncompressed_size = std::uint64_t{1} << 30;

// LZ4's block format: sequences of (token, literals, 16-bit offset, match), the last one literals only.
bool lz4_decompress(std::span<const std::byte> in, std::vector<std::byte>& out) {
  std::size_t at = 0;
  const auto read_length = [&](std::size_t length) -> std::optional<std::size_t> {
    if (length != 15) {
      return length;
    }
    while (true) {
      if (at >= in.size()) {
        return std::nullopt;
      }
      const auto extra = std::to_integer<std::size_t>(in[at++]);
      length += extra;
      if (extra != 255) {
        return length;
      }
    }
  };
  while (at < in.size()) {
    const auto token = std::to_integer<std::size_t>(in[at++]);
    const auto literals = read_length(token >> 4);
    if (!literals || *literals > in.size() - at || *literals > out.capacity() - out.size()) {
      return false;
    }
    out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(at),
               in.begin() + static_cast<std::ptrdiff_t>(at + *literals));
    at += *literals;
    if (at == in.size()) {
      return true;
    }
    if (in.size() - at < 2) {
      return false;
    }
    const auto distance = std::to_integer<std::size_t>(in[at]) | std::to_integer<std::size_t>(in[at + 1]) << 8;
    at += 2;
    const auto match = read_length(token & 15);
    if (!match || distance == 0 || distance > out.size() || *match + 4 > out.capacity() - out.size()) {
      return false;
    }
    // Byte by byte: a match may overlap the bytes it produces.
    for (std::size_t i = 0; i < *match + 4; ++i) {
      out.push_back(out[out.size() - distance]);
    }
  }
  return true;
}

}  // namespace

Result<std::vector<std::byte>> decompress_payload(std::span<const std::byte> compressed,
                                                  PayloadCompression compression, std::uint64_t uncompressed_size,
                                                  std::string_view name, std::uint64_t offset) {
  if (compression == PayloadCompression::none) {
    return std::vector<std::byte>(compressed.begin(), compressed.end());
  }
  if (uncompressed_size == 0 || uncompressed_size > max_uncompressed_size) {
    return fail("failed to read fatbin in {}: entry at offset {} claims {} uncompressed bytes", name, offset,
                uncompressed_size);
  }
  std::vector<std::byte> out;
  if (compression == PayloadCompression::zstd) {
    out.resize(uncompressed_size);
    const auto size = ZSTD_decompress(out.data(), out.size(), compressed.data(), compressed.size());
    if (ZSTD_isError(size) || size != uncompressed_size) {
      return fail("failed to read fatbin in {}: the zstd payload of the entry at offset {} does not decompress to "
                  "{} bytes{}{}",
                  name, offset, uncompressed_size, ZSTD_isError(size) ? ": " : "",
                  ZSTD_isError(size) ? ZSTD_getErrorName(size) : "");
    }
    return out;
  }
  out.reserve(uncompressed_size);
  if (!lz4_decompress(compressed, out) || out.size() != uncompressed_size) {
    return fail("failed to read fatbin in {}: the LZ4 payload of the entry at offset {} does not decompress to {} "
                "bytes",
                name, offset, uncompressed_size);
  }
  return out;
}

}  // namespace hwimg::hw
