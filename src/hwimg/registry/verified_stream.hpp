#pragma once
// A blob's body checked as it passes, for every reader of blobs from a registry (a copy into a
// layout, a relay to another registry, a mirror's client): each piece is handed on as it comes,
// except the last, which is held back until the whole body is known to be the blob asked for, so
// no reader ever receives all of a body that was not (docs/serve.md#what-passes-through).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "hwimg/oci/digest.hpp"
#include "hwimg/util/error.hpp"

namespace hwimg::registry {

class VerifiedStream {
public:
  // The pieces of a body in order: nullopt at its end, an error when the transfer broke.
  using Source = std::function<Result<std::optional<std::string>>()>;

  // `size`, when known (a descriptor's), is checked too, and a body that grows past it is stopped
  // there rather than read to its end.
  VerifiedStream(Source source, oci::Digest expected, std::optional<std::uint64_t> size = std::nullopt);

  // The next piece; nullopt once the body ended and matched. A body that does not match ends with
  // "blob sha256:… does not match its digest (content hashes to sha256:…)", or its size's error.
  [[nodiscard]] Result<std::optional<std::string>> next();

private:
  Source m_source;
  oci::Digest m_expected;
  std::optional<std::uint64_t> m_size;
  oci::Sha256 m_hash;
  std::uint64_t m_received = 0;
  std::optional<std::string> m_held;
  bool m_finished = false;
};

}  // namespace hwimg::registry
