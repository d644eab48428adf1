#pragma once
// Content digests ("sha256:<64 hex>") and a streaming SHA-256.

#include <compare>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "hwimg/util/error.hpp"

namespace hwimg::oci {

class Digest {
public:
  Digest() = default;
  // Accepts "sha256:" followed by exactly 64 lower-case hex digits, as the image spec requires.
  [[nodiscard]] static Result<Digest> parse(std::string_view text);
  [[nodiscard]] static Digest sha256_of(std::string_view data);
  [[nodiscard]] static Digest from_sha256_hex(std::string hex) { return Digest(std::move(hex)); }

  [[nodiscard]] std::string str() const { return "sha256:" + m_hex; }
  [[nodiscard]] const std::string& hex() const { return m_hex; }
  [[nodiscard]] bool empty() const { return m_hex.empty(); }
  // The short form people read in tables.
  [[nodiscard]] std::string short_hex() const { return m_hex.substr(0, 12); }
  // The short form with its algorithm, where it names one image among others: "sha256:0123456789ab".
  [[nodiscard]] std::string short_str() const { return "sha256:" + short_hex(); }

  auto operator<=>(const Digest&) const = default;

private:
  explicit Digest(std::string hex) : m_hex(std::move(hex)) {}
  std::string m_hex;
};

// Incremental SHA-256 (OpenSSL EVP), move-only.
class Sha256 {
public:
  Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  ~Sha256();

  void update(std::string_view data);
  void update(const void* data, std::size_t size);
  [[nodiscard]] Digest finish();

private:
  struct Context;
  std::unique_ptr<Context> m_context;
};

struct FileDigest {
  Digest digest;
  std::int64_t size = 0;
};

// Streams a regular file through SHA-256; a FIFO or device is refused.
[[nodiscard]] Result<FileDigest> digest_file(const std::string& path);

}  // namespace hwimg::oci

template <>
struct fmt::formatter<hwimg::oci::Digest> : fmt::formatter<std::string> {
  auto format(const hwimg::oci::Digest& digest, format_context& ctx) const {
    return fmt::formatter<std::string>::format(digest.str(), ctx);
  }
};
