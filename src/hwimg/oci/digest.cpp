#include "hwimg/oci/digest.hpp"

#include <cerrno>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "hwimg/util/fd.hpp"
#include "hwimg/util/files.hpp"

namespace hwimg::oci {
namespace {

// Fetched once, without reading openssl.cnf: hwimg needs only the built-in SHA-256, and loading the
// configuration cost every start a millisecond.
const EVP_MD* sha256_algorithm() {
  static const EVP_MD* algorithm = [] {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr);
    return EVP_MD_fetch(nullptr, "SHA256", nullptr);
  }();
  return algorithm;
}

}  // namespace

struct Sha256::Context {
  struct Free {
    void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> ctx{EVP_MD_CTX_new()};
};

Sha256::Sha256() : m_context(std::make_unique<Context>()) {
  // Only allocation failure can make these fail; there is no way to go on without a hasher.
  if (!m_context->ctx || EVP_DigestInit_ex(m_context->ctx.get(), sha256_algorithm(), nullptr) != 1) {
    throw std::runtime_error("failed to initialise SHA-256: OpenSSL error");
  }
}

Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;
Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) {
  if (EVP_DigestUpdate(m_context->ctx.get(), data, size) != 1) {
    throw std::runtime_error("failed to update SHA-256: OpenSSL error");
  }
}

void Sha256::update(std::string_view data) {
  update(data.data(), data.size());
}

Digest Sha256::finish() {
  unsigned char raw[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(m_context->ctx.get(), raw, &length) != 1) {
    throw std::runtime_error("failed to finish SHA-256: OpenSSL error");
  }
  static constexpr char hex_digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned i = 0; i < length; ++i) {
    hex.push_back(hex_digits[raw[i] >> 4]);
    hex.push_back(hex_digits[raw[i] & 0xf]);
  }
  return Digest::from_sha256_hex(std::move(hex));
}

Digest Digest::sha256_of(std::string_view data) {
  Sha256 hasher;
  hasher.update(data);
  return hasher.finish();
}

Result<Digest> Digest::parse(std::string_view text) {
  constexpr std::string_view prefix = "sha256:";
  if (!text.starts_with(prefix)) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) {
      return fail("failed to parse digest \"{}\": expected \"sha256:<64 hex digits>\"", text);
    }
    return fail("failed to parse digest \"{}\": unsupported algorithm \"{}\" (expected sha256)", text,
                text.substr(0, colon));
  }
  const auto hex = text.substr(prefix.size());
  if (hex.size() != 64) {
    return fail("failed to parse digest \"{}\": expected 64 hex digits, got {}", text, hex.size());
  }
  for (const char c : hex) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return fail("failed to parse digest \"{}\": '{}' is not a lower-case hex digit", text, c);
    }
  }
  return Digest(std::string(hex));
}

Result<FileDigest> digest_file(const std::string& path) {
  // A FIFO would hang the hash and /dev/zero never end it.
  HWIMG_TRY_ASSIGN(const auto fd, util::open_regular_file(path));
  Sha256 hash;
  std::string buffer(1 << 20, '\0');
  FileDigest result;
  while (true) {
    const auto n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("failed to read {}: {}", path, util::errno_text(errno));
    if (n == 0) break;
    hash.update(buffer.data(), static_cast<std::size_t>(n));
    result.size += n;
  }
  result.digest = hash.finish();
  return result;
}

}  // namespace hwimg::oci
